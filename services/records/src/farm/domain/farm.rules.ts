/**
 * The farm's rules (docs/farm.md, docs/api-notes.md "Farm"): the bounds of a job, who may do
 * what, which job-level changes each status allows, and the lease tokens agents hold.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError, farmPolicy, isUuid, type Principal, type Problem } from '@reelbase/lib-platform';
import { chunkFrames, FramesError } from './frames.js';

export const FARM_STATUSES = farmPolicy.FARM_STATUSES;
export type FarmStatus = farmPolicy.FarmStatus;

/** The bounds of a job, written once for the gateway and records (lib-platform policy/farm.policy.ts). */
export const LIMITS = farmPolicy.LIMITS;

/**
 * The bytes one page of chunks may fill before it ends (docs/farm.md, "Bounds"): a page ends with
 * the first chunk that reaches it, so a page is at most this plus one chunk: at most 4 MiB + 192 KiB
 * (a chunk of 10,000 nine-digit frames, a 10,000-character error, a 200-character worker and a
 * 64 KiB output), well under the 16 MiB a gRPC answer may carry, whatever `limit` asks for.
 */
export const CHUNK_PAGE_BYTES = farmPolicy.CHUNK_PAGE_BYTES;

/**
 * What one chunk counts against {@link CHUNK_PAGE_BYTES} besides its `frames`, `error`, `worker`
 * and `output` (their UTF-8 bytes): its ids, state, numbers, timestamp and protobuf framing.
 */
export const CHUNK_FIXED_BYTES = 256;

/** Roles that manage any job (besides its submitter). */
const MANAGERS: ReadonlySet<string> = new Set(['Admin', 'Supervisor', 'Coordinator']);

/** What POST /farm/jobs carries, as the handler passes it. */
export interface CreateJobInput {
  projectId: string;
  name: string;
  kind: string;
  pool?: string;
  priority?: number;
  frames?: string;
  chunkSize?: number;
  payloadJson?: string;
  versionId?: string;
  taskId?: string;
  maxAttempts?: number;
  dependsOn: string[];
  manager?: string;
  externalId?: string;
}

/** A create after its checks: the values to store and the chunks' frames. */
export interface CheckedJob {
  projectId: string;
  pool: string;
  priority: number;
  chunkSize: number;
  maxAttempts: number;
  dependsOn: string[];
  data: Record<string, unknown>;
  chunks: (string | null)[];
}

const invalid = (loc: (string | number)[], msg: string, type: string): Problem => ({ loc, msg, type });

function intIn(problems: Problem[], name: string, v: number | undefined, l: { min: number; max: number; default: number }): number {
  if (v === undefined) return l.default;
  if (!Number.isInteger(v) || v < l.min || v > l.max) problems.push(invalid([name], `Input should be an integer from ${l.min} to ${l.max}`, 'int_range'));
  return v;
}

function text(problems: Problem[], name: string, v: string | undefined, required: boolean): void {
  if (v === undefined) {
    if (required) problems.push(invalid([name], 'Field required', 'missing'));
    return;
  }
  if (v.trim() === '' || v.length > LIMITS.text) problems.push(invalid([name], `Input should have 1 to ${LIMITS.text} characters`, 'string_length'));
}

/** Every problem of a create at once (422), else the values to store. */
export function checkCreateJob(input: CreateJobInput): CheckedJob {
  const problems: Problem[] = [];
  if (!isUuid(input.projectId)) problems.push(invalid(['project_id'], 'Input should be a valid UUID', 'uuid_parsing'));
  text(problems, 'name', input.name, true);
  text(problems, 'kind', input.kind, true);
  text(problems, 'pool', input.pool, false);
  text(problems, 'manager', input.manager, false);
  text(problems, 'external_id', input.externalId, false);
  const priority = intIn(problems, 'priority', input.priority, LIMITS.priority);
  const chunkSize = intIn(problems, 'chunk_size', input.chunkSize, LIMITS.chunkSize);
  const maxAttempts = intIn(problems, 'max_attempts', input.maxAttempts, LIMITS.maxAttempts);
  for (const [name, v] of [
    ['version_id', input.versionId],
    ['task_id', input.taskId],
  ] as const) {
    if (v !== undefined && !isUuid(v)) problems.push(invalid([name], 'Input should be a valid UUID', 'uuid_parsing'));
  }
  if (input.dependsOn.length > LIMITS.dependsOn) problems.push(invalid(['depends_on'], `a job depends on at most ${LIMITS.dependsOn} jobs`, 'too_long'));
  input.dependsOn.forEach((id, i) => {
    if (!isUuid(id)) problems.push(invalid(['depends_on', i], 'Input should be a valid UUID', 'uuid_parsing'));
  });
  let payload: unknown;
  if (input.payloadJson !== undefined) {
    try {
      payload = JSON.parse(input.payloadJson);
    } catch {
      payload = undefined;
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      problems.push(invalid(['payload'], 'Input should be a valid dictionary', 'dict_type'));
    }
  }
  let chunks: (string | null)[] = [];
  if (input.frames !== undefined && input.frames.length > LIMITS.framesText) {
    problems.push(invalid(['frames'], `a frame list has at most ${LIMITS.framesText} characters`, 'string_too_long'));
  } else if (problems.every((p) => p.loc[0] !== 'chunk_size')) {
    try {
      chunks = chunkFrames(input.frames, chunkSize);
    } catch (err) {
      if (!(err instanceof FramesError)) throw err;
      problems.push(invalid(['frames'], err.message, 'frames'));
    }
  }
  if (problems.length) throw AppError.invalid(problems);
  const dependsOn = [...new Set(input.dependsOn.map((id) => id.toLowerCase()))];
  const data: Record<string, unknown> = {
    name: input.name,
    kind: input.kind,
    pool: input.pool ?? 'default',
    priority,
    frames: input.frames ?? null,
    chunk_size: chunkSize,
    max_attempts: maxAttempts,
    depends_on: dependsOn,
    chunks_total: chunks.length,
    chunks_done: 0,
    chunks_failed: 0,
    attempts_failed: 0,
    progress: 0,
  };
  if (payload !== undefined) data.payload = payload;
  if (input.versionId !== undefined) data.version_id = input.versionId.toLowerCase();
  if (input.taskId !== undefined) data.task_id = input.taskId.toLowerCase();
  if (input.manager !== undefined) data.manager = input.manager;
  if (input.externalId !== undefined) data.external_id = input.externalId;
  if (data.frames === null) delete data.frames;
  return { projectId: input.projectId.toLowerCase(), pool: data.pool as string, priority, chunkSize, maxAttempts, dependsOn, data, chunks };
}

/** The acting principal of a farm call. */
export function principalOf(p: Principal | undefined): Principal {
  if (!p) throw new AppError('unauthenticated', 'farm calls need an acting principal');
  return p;
}

/** Submitting jobs and working as an agent: every role but Viewer (services too). */
export function assertFarmWriter(p: Principal, what: string): void {
  if (p.authKind === 'guest' || p.role === 'Viewer') throw new AppError('forbidden', `a ${p.role || 'guest'} may not ${what}`);
}

/**
 * An agent key created with `pools` claims only from them (docs/api-notes.md, "Authentication"):
 * another pool is 403 `forbidden` naming them. Any other caller claims from any pool.
 */
export function assertAgentPool(p: Principal, pool: string): void {
  if (p.scope !== 'agent' || p.pools === undefined || p.pools.includes(pool)) return;
  const named = p.pools.map((x) => JSON.stringify(x)).join(', ');
  throw new AppError('forbidden', `this agent key claims only from the pool${p.pools.length > 1 ? 's' : ''} ${named}, not ${JSON.stringify(pool)}`);
}

/** Job-level changes and reports: the submitter, Admin, Supervisor, Coordinator (and services). */
export function assertJobManager(p: Principal, submittedBy: string | null): void {
  if (p.authKind === 'service' || MANAGERS.has(p.role)) return;
  if (p.authKind !== 'guest' && p.userId && submittedBy && p.userId.toLowerCase() === submittedBy.toLowerCase()) return;
  throw new AppError('forbidden', "only the job's submitter, an Admin, a Supervisor or a Coordinator may change this job");
}

export type JobAction = 'pause' | 'resume' | 'cancel' | 'retry';
export const JOB_ACTIONS: readonly JobAction[] = ['pause', 'resume', 'cancel', 'retry'];

/** The statuses each action starts from. */
const FROM: Record<JobAction, readonly string[]> = {
  pause: ['queued', 'running'],
  resume: ['paused'],
  cancel: ['queued', 'running', 'paused', 'failed'],
  retry: ['failed'],
};

/** The status after `action`, or 409 `transition_not_allowed`. */
export function nextStatus(action: JobAction, status: string | null, everClaimed: boolean): FarmStatus {
  if (!status || !FROM[action].includes(status)) {
    throw AppError.conflict(
      'transition_not_allowed',
      `a ${status ?? 'status-less'} job cannot be ${action === 'retry' ? 'retried' : `${action}d`} (from ${FROM[action].join(', ')} only)`,
    );
  }
  if (action === 'pause') return 'paused';
  if (action === 'cancel') return 'cancelled';
  return everClaimed ? 'running' : 'queued';
}

/** What POST /farm/jobs/{id}/report carries. */
export interface ReportInput {
  status?: string;
  progress?: number;
  chunksDone?: number;
  chunksFailed?: number;
  error?: string;
}

/** The checked report as a change: the status (kept when absent) and the data fields it sets. */
export function checkReport(input: ReportInput, currentStatus: string | null): { status: string; data: Record<string, unknown> } {
  const problems: Problem[] = [];
  if (input.status !== undefined && !(FARM_STATUSES as readonly string[]).includes(input.status)) {
    problems.push(invalid(['status'], `Input should be one of ${FARM_STATUSES.join(', ')}`, 'enum'));
  }
  if (input.progress !== undefined && (!Number.isInteger(input.progress) || input.progress < 0 || input.progress > 100)) {
    problems.push(invalid(['progress'], 'Input should be an integer from 0 to 100', 'int_range'));
  }
  for (const [name, v] of [
    ['chunks_done', input.chunksDone],
    ['chunks_failed', input.chunksFailed],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > 1_000_000_000))
      problems.push(invalid([name], 'Input should be a non-negative integer', 'int_range'));
  }
  if (input.error !== undefined && input.error.length > LIMITS.error)
    problems.push(invalid(['error'], `at most ${LIMITS.error} characters`, 'string_too_long'));
  if (problems.length) throw AppError.invalid(problems);
  const data: Record<string, unknown> = {};
  if (input.progress !== undefined) data.progress = input.progress;
  if (input.chunksDone !== undefined) data.chunks_done = input.chunksDone;
  if (input.chunksFailed !== undefined) data.chunks_failed = input.chunksFailed;
  if (input.error !== undefined) data.error = input.error;
  return { status: input.status ?? currentStatus ?? 'queued', data };
}

/** A lease token: 192 random bits; only its SHA-256 is stored. */
export function newLease(): { token: string; digest: Buffer } {
  const token = `lease_${randomBytes(24).toString('base64url')}`;
  return { token, digest: leaseDigest(token) };
}

export function leaseDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/**
 * A chunk's `output` as it is stored and answered: the JSON text in its compact form, or 422 at
 * `["output"]` when it is not JSON or is larger than {@link LIMITS.outputBytes} once compact.
 */
export function checkOutput(outputJson: string | undefined): string | null {
  if (outputJson === undefined) return null;
  let compact: string;
  try {
    compact = JSON.stringify(JSON.parse(outputJson));
  } catch {
    throw AppError.invalid([invalid(['output'], 'Input should be valid JSON', 'json_invalid')]);
  }
  const bytes = Buffer.byteLength(compact);
  if (bytes > LIMITS.outputBytes) {
    throw AppError.invalid([invalid(['output'], `an output has at most ${LIMITS.outputBytes} bytes of JSON (this one has ${bytes})`, 'too_large')]);
  }
  return compact;
}

/** The page a chunk list asks for: `limit` (1..500, 100) and the index its cursor names, or 422s. */
export function checkChunkPage(limit: number | undefined, cursor: string | undefined): { limit: number; afterIndex: number } {
  const problems: Problem[] = [];
  const n = intIn(problems, 'limit', limit, LIMITS.chunkPage);
  let afterIndex = -1;
  if (cursor !== undefined) {
    const decoded = decodeChunkCursor(cursor);
    if (decoded === undefined) problems.push(invalid(['cursor'], 'not a cursor of this list', 'value_error'));
    else afterIndex = decoded;
  }
  if (problems.length) throw AppError.invalid(problems);
  return { limit: n, afterIndex };
}

/** The cursor of the page after the chunk of index `index`: opaque to clients. */
export function encodeChunkCursor(index: number): string {
  return Buffer.from(JSON.stringify(['chunk', index])).toString('base64url');
}

function decodeChunkCursor(cursor: string): number | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && v[0] === 'chunk' && Number.isInteger(v[1]) && (v[1] as number) >= 0) return v[1] as number;
  } catch {
    // not ours
  }
  return undefined;
}
