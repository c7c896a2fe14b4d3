/**
 * Bodies and answers of the farm routes (docs/api-notes.md, "Farm"; docs/farm.md).
 */
import { farmPolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { boundedInt, count, JsonObject, queryInt, rangeText, Uuid } from './common.schema.js';
import { RecordOut } from './record.schema.js';

const L = farmPolicy.LIMITS;
const Text = z.string().min(1).max(L.text);
const Progress = z.number().int().min(L.progress.min).max(L.progress.max);

export const JobPath = z.strictObject({ id: Uuid });
export const ChunkPath = z.strictObject({ id: Uuid });

export const FarmJobCreate = z
  .strictObject({
    project_id: Uuid,
    name: Text,
    kind: Text.describe('What agents run, e.g. `render`, `publish`; agents may claim only some kinds.'),
    pool: Text.default('default').describe('Agents claim from one pool.'),
    priority: boundedInt(L.priority).describe('Higher first.'),
    frames: z
      .string()
      .min(1)
      .max(L.framesText)
      .optional()
      .describe(
        `Frame list: \`1001-1100\`, \`1-10,20-40x2\` (ranges ascending, \`xN\` steps, no frame twice), at most ${count(L.frames)} frames cut into at ` +
          `most ${count(L.chunks)} chunks. Absent: the job is one chunk.`,
      ),
    chunk_size: boundedInt(L.chunkSize).describe('Consecutive frames of the list per chunk.'),
    payload: JsonObject.optional().describe('Anything the agent needs (scene path, settings).'),
    version_id: Uuid.optional(),
    task_id: Uuid.optional(),
    max_attempts: boundedInt(L.maxAttempts).describe('Failed or expired attempts per chunk before it fails, and the job with it.'),
    depends_on: z.array(Uuid).max(L.dependsOn).default([]).describe('FarmJob ids; the chunks are offered once every one of them is done.'),
    manager: Text.optional().describe('An outside render manager (e.g. `deadline`): the job is tracked only, never offered to agents.'),
    external_id: Text.optional().describe("The job's id in the outside manager."),
  })
  .meta({ id: 'FarmJobCreate', description: 'Body of POST /farm/jobs.' });

export const FarmClaim = z
  .strictObject({
    pool: Text,
    worker: Text.describe('The agent (host name, slot); told apart from other agents of the same API key by the lease.'),
    kinds: z.array(Text).min(1).max(50).optional().describe('Only chunks of jobs of these kinds; absent: any kind.'),
    lease_seconds: boundedInt(L.leaseSeconds),
  })
  .meta({ id: 'FarmClaim', description: 'Body of POST /farm/claim.' });

const Lease = z.string().min(1).max(200).describe('The lease of the claim (from POST /farm/claim).');

export const FarmHeartbeat = z
  .strictObject({ lease: Lease, progress: Progress.optional().describe('Kept on the chunk; no event.') })
  .meta({ id: 'FarmHeartbeat' });

export const FarmComplete = z
  .strictObject({
    lease: Lease,
    output: z
      .unknown()
      .optional()
      .describe(
        `Any JSON value, kept on the chunk: at most ${L.outputBytes / 1024} KiB (${count(L.outputBytes)} bytes) as compact JSON, else 422 \`too_large\` at \`["body","output"]\`.`,
      ),
  })
  .meta({ id: 'FarmComplete' });

export const FarmFail = z.strictObject({ lease: Lease, error: z.string().min(1).max(L.error) }).meta({ id: 'FarmFail' });

export const FarmReport = z
  .strictObject({
    status: z.enum(farmPolicy.FARM_STATUSES).optional(),
    progress: Progress.optional(),
    chunks_done: z.number().int().min(0).optional(),
    chunks_failed: z.number().int().min(0).optional(),
    error: z.string().max(L.error).optional(),
  })
  .meta({ id: 'FarmReport', description: 'Body of POST /farm/jobs/{id}/report.' });

export const FarmChunkOut = z
  .object({
    id: z.string(),
    job_id: z.string(),
    index: z.number().int(),
    frames: z.string().nullable().describe('Compact: `1001-1010`, `20,22,24`; null for a job without frames.'),
    state: z.enum(['queued', 'leased', 'done', 'failed']),
    attempt: z.number().int().describe('The attempt the current or last claim is (1 for the first; 0 never claimed).'),
    lease_expires_at: z.string().nullable(),
    progress: z.number().int().nullable(),
    worker: z.string().nullable(),
    error: z.string().nullable(),
    output: z.unknown().optional(),
  })
  .meta({ id: 'FarmChunk' });

export const FarmClaimed = z
  .object({
    job: RecordOut,
    chunk: z.object({
      id: z.string(),
      index: z.number().int(),
      frames: z.string().nullable(),
      attempt: z.number().int(),
      lease: z.string().describe('Opaque (192 random bits); only its SHA-256 is stored. Send it with heartbeat, complete and fail.'),
      lease_expires_at: z.string(),
    }),
  })
  .meta({ id: 'FarmClaimed' });

export const FarmChunkDone = z.object({ chunk: FarmChunkOut, job: RecordOut }).meta({ id: 'FarmChunkResult' });

export const ChunksQuery = z.strictObject({
  limit: queryInt(L.chunkPage).describe(`${rangeText(L.chunkPage)}.`),
  cursor: z.string().min(1).max(512).optional().describe('The `next_cursor` of the previous page.'),
});

export const FarmChunkList = z
  .object({
    items: z.array(FarmChunkOut),
    next_cursor: z.string().nullable().describe('Opaque; null on the last page.'),
  })
  .meta({
    id: 'FarmChunkPage',
    description:
      `In index order: at most \`limit\` chunks, and fewer when their frames, errors and outputs fill ${farmPolicy.CHUNK_PAGE_BYTES / 1024 ** 2} MiB (the page ends with ` +
      'the chunk that reaches it), so a page stays small whatever the outputs. `next_cursor` is null on the last page.',
  });
