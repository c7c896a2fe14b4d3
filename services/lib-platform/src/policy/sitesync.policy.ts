/**
 * Site sync's vocabulary and bounds (docs/sitesync.md; docs/api-notes.md, "Site sync"), written
 * once: the gateway validates and documents the site sync routes with them, and records checks
 * what it is given against the same values.
 */

export const SITE_KINDS = ['studio', 'remote', 'cloud'] as const;

export const STATE_STATUSES = ['queued', 'in_progress', 'synced', 'failed', 'paused', 'removed'] as const;

/** What an agent holding the lease may report. */
export const REPORT_STATUSES = ['in_progress', 'synced', 'failed'] as const;

/** What a person (or script) may set by PATCH. */
export const PATCH_STATUSES = ['paused', 'queued', 'removed'] as const;

/** The 5th lost or failed attempt leaves a state `failed`. */
export const MAX_ATTEMPTS = 5;

/** A site code: lower-case letters, digits, `_` and `-`, at most 64 characters. */
export const SITE_CODE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const SITE_NAME_MAX = 200;
export const SITE_ROOT_MAX = 4096;
export const AGENT_MAX = 200;
export const ERROR_MAX = 10_000;

export const REQUEST_IDS = { min: 1, max: 1000 } as const;
export const PRIORITY = { min: 0, max: 100, default: 50 } as const;
export const CLAIM_LIMIT = { min: 1, max: 100, default: 10 } as const;
export const LEASE_SECONDS = { min: 10, max: 3600, default: 300 } as const;
export const PAGE_LIMIT = { min: 1, max: 1000, default: 100 } as const;
