/**
 * The farm's bounds (docs/farm.md, "Bounds"; docs/api-notes.md, "Farm"), written once: the gateway
 * validates and documents the farm routes' bodies with them, and records checks what it is given
 * against the same numbers (it never trusts a caller's values).
 */

/** A FarmJob's statuses (`POST /farm/jobs/{id}/report` may set any of them). */
export const FARM_STATUSES = ['queued', 'running', 'done', 'failed', 'paused', 'cancelled'] as const;
export type FarmStatus = (typeof FARM_STATUSES)[number];

export const LIMITS = {
  priority: { min: 0, max: 100, default: 50 },
  chunkSize: { min: 1, max: 10_000, default: 10 },
  maxAttempts: { min: 1, max: 10, default: 3 },
  leaseSeconds: { min: 10, max: 3600, default: 300 },
  dependsOn: 100,
  /** A name, kind, pool, worker, manager or external id (characters). */
  text: 200,
  error: 10_000,
  /** A chunk's `output`, as compact JSON (UTF-8 bytes). */
  outputBytes: 64 * 1024,
  /** Chunks per page of GET /farm/jobs/{id}/chunks. */
  chunkPage: { min: 1, max: 500, default: 100 },
  /** Characters of a job's frame list. */
  framesText: 10_000,
  /** Frames a job lists, and the chunks they are cut into. */
  frames: 100_000,
  chunks: 10_000,
  /** A job's or a chunk's progress, in percent. */
  progress: { min: 0, max: 100 },
} as const;

/** The bytes one page of chunks may fill before it ends (docs/farm.md, "Bounds"). */
export const CHUNK_PAGE_BYTES = 4 * 1024 * 1024;
