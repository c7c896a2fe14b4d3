/**
 * The requests of POST /batch (docs/api-notes.md, "Batches") as records receives them: the
 * gateway validated their shape; what reaches here is read again defensively, and every
 * problem is located under `requests[i]`.
 */
import { AppError, entityPolicy, isUuid, type Problem } from '@reelbase/lib-platform';
import { isPlainObject } from '../../kernel/domain/record.changes.js';

export const { BATCH_MAX } = entityPolicy;

export type BatchRequestType = 'create' | 'update' | 'delete';

export interface BatchRequest {
  requestType: BatchRequestType;
  entityType: string;
  entityId?: string;
  /** Absent: unchanged (update) or none (create); null: cleared. */
  projectId?: string | null;
  status?: string | null;
  data?: Record<string, unknown>;
}

/** The problems of request `i`, located under `requests[i]`. */
export const atRequestLoc = (i: number, problems: readonly Problem[]): Problem[] => problems.map((p) => ({ ...p, loc: ['requests', i, ...p.loc] }));

/** A 403, 404 or 409 of request `i`: the whole batch answers it, with the request's index. */
export function atRequest(i: number, err: unknown): never {
  if (err instanceof AppError && err.kind === 'invalid') throw AppError.invalid(atRequestLoc(i, err.problems));
  if (err instanceof AppError && err.kind !== 'internal' && err.kind !== 'unavailable' && err.kind !== 'too_large') {
    throw new AppError(err.kind, `requests[${i}]: ${err.message}`, { code: err.code, extra: { ...err.extra, index: i } });
  }
  throw err;
}

const TYPES: readonly string[] = ['create', 'update', 'delete'];
const KEYS: ReadonlySet<string> = new Set(['request_type', 'entity_type', 'entity_id', 'project_id', 'status', 'data']);

const problem = (loc: (string | number)[], msg: string, type = 'value_error'): Problem => ({ loc, msg, type });

/** The problems of one request's shape, located at `requests[i]`; empty when it is well formed. */
export function batchRequestProblems(raw: unknown, i: number): Problem[] {
  const at = (...loc: (string | number)[]) => ['requests', i, ...loc];
  if (!isPlainObject(raw)) return [problem(at(), 'Input should be a valid dictionary or object', 'dict_type')];
  const out: Problem[] = [];
  for (const key of Object.keys(raw)) if (!KEYS.has(key)) out.push(problem(at(key), 'Extra inputs are not permitted', 'extra_forbidden'));
  const type = raw.request_type;
  if (typeof type !== 'string' || !TYPES.includes(type)) out.push(problem(at('request_type'), "Input should be 'create', 'update' or 'delete'", 'enum'));
  if (typeof raw.entity_type !== 'string' || raw.entity_type === '') out.push(problem(at('entity_type'), 'Field required: a type code', 'missing'));
  if (raw.entity_id !== undefined && !isUuid(raw.entity_id)) out.push(problem(at('entity_id'), 'Input should be a valid UUID', 'uuid_parsing'));
  if ((type === 'update' || type === 'delete') && raw.entity_id === undefined) out.push(problem(at('entity_id'), `Field required for ${type}`, 'missing'));
  if (raw.project_id !== undefined && raw.project_id !== null && !isUuid(raw.project_id)) {
    out.push(problem(at('project_id'), 'Input should be a valid UUID or null', 'uuid_parsing'));
  }
  if (raw.status !== undefined && raw.status !== null && typeof raw.status !== 'string')
    out.push(problem(at('status'), 'Input should be a string or null', 'string_type'));
  if (raw.data !== undefined && !isPlainObject(raw.data)) out.push(problem(at('data'), 'Input should be a valid dictionary', 'dict_type'));
  if (type === 'delete') {
    for (const key of ['project_id', 'status', 'data']) {
      if (raw[key] !== undefined) out.push(problem(at(key), 'a delete takes only entity_type and entity_id', 'extra_forbidden'));
    }
  }
  return out;
}

/** The request, once {@link batchRequestProblems} found nothing. */
export function toBatchRequest(raw: Record<string, unknown>): BatchRequest {
  return {
    requestType: raw.request_type as BatchRequestType,
    entityType: raw.entity_type as string,
    entityId: raw.entity_id as string | undefined,
    projectId: raw.project_id as string | null | undefined,
    status: raw.status as string | null | undefined,
    data: raw.data as Record<string, unknown> | undefined,
  };
}

/** The requests as JSON text; a malformed array is a 422 at `requests`. */
export function parseBatchRequests(json: string): unknown[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw AppError.invalid([problem(['requests'], 'requests must be a JSON array', 'json_invalid')]);
  }
  if (!Array.isArray(raw)) throw AppError.invalid([problem(['requests'], 'Input should be a valid list', 'list_type')]);
  if (raw.length < 1 || raw.length > BATCH_MAX) {
    throw AppError.invalid([problem(['requests'], `a batch holds 1 to ${BATCH_MAX} requests`, raw.length < 1 ? 'too_short' : 'too_long')]);
  }
  return raw;
}

/**
 * The ids of the existing records a batch updates or retires, lower-cased, each once, in id order: the
 * order the batch locks them in before its first request runs (docs/api-notes.md, "Batches"). Requests
 * whose shape is wrong are left to their own check.
 */
export function batchLockIds(requests: readonly unknown[]): string[] {
  const ids = new Set<string>();
  for (const raw of requests) {
    if (!isPlainObject(raw) || (raw.request_type !== 'update' && raw.request_type !== 'delete') || !isUuid(raw.entity_id)) continue;
    ids.add((raw.entity_id as string).toLowerCase());
  }
  return [...ids].sort();
}
