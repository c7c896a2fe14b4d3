/**
 * The body of a sync import as records checks it (the gateway validates it first with the same
 * rules; records checks again, as every service does with what it is given). docs/api-notes.md, "Sync".
 */
import { AppError, isUuid, syncPolicy, type Problem } from '@reelbase/lib-platform';
import { isPlainObject } from '../../kernel/domain/record.changes.js';
import type { DataObject } from '../../kernel/domain/record.types.js';

/** A source's name, items per import, the longest external id (lib-platform policy/sync.policy.ts). */
export const { SYNC_SOURCE, SYNC_MAX_ITEMS, SYNC_MAX_EXTERNAL_ID } = syncPolicy;

export interface SyncItem {
  externalId: string;
  entityType: string;
  projectExternalId?: string;
  projectId?: string;
  /** Absent: unchanged (create: none). */
  status?: string | null;
  data: DataObject;
}

export interface SyncImportInput {
  source: string;
  items: SyncItem[];
  dryRun: boolean;
}

const ITEM_KEYS = new Set(['external_id', 'entity_type', 'project_external_id', 'project_id', 'status', 'data']);
const BODY_KEYS = new Set(['source', 'items', 'dry_run']);

const problem = (loc: (string | number)[], msg: string, type: string): Problem => ({ loc, msg, type });

function externalIdProblem(v: unknown, loc: (string | number)[]): Problem | undefined {
  if (typeof v !== 'string') return problem(loc, 'Input should be a valid string', 'string_type');
  if (v.length < 1 || v.length > SYNC_MAX_EXTERNAL_ID) return problem(loc, `String should have 1 to ${SYNC_MAX_EXTERNAL_ID} characters`, 'string_length');
  return undefined;
}

/** Parses and checks the body; every problem at once, located under `items`. */
export function parseSyncImport(json: string): SyncImportInput {
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    throw AppError.invalid([problem([], 'Input should be a valid JSON object', 'json_invalid')]);
  }
  if (!isPlainObject(body)) throw AppError.invalid([problem([], 'Input should be a valid dictionary', 'dict_type')]);
  const problems: Problem[] = [];
  for (const k of Object.keys(body)) if (!BODY_KEYS.has(k)) problems.push(problem([k], 'Extra inputs are not permitted', 'extra_forbidden'));
  if (typeof body.source !== 'string' || !SYNC_SOURCE.test(body.source)) {
    problems.push(problem(['source'], `String should match pattern '${SYNC_SOURCE.source}'`, 'string_pattern_mismatch'));
  }
  if (body.dry_run !== undefined && typeof body.dry_run !== 'boolean') problems.push(problem(['dry_run'], 'Input should be a valid boolean', 'bool_type'));
  const items: SyncItem[] = [];
  if (!Array.isArray(body.items) || body.items.length < 1 || body.items.length > SYNC_MAX_ITEMS) {
    problems.push(problem(['items'], `Input should be a list of 1 to ${SYNC_MAX_ITEMS} items`, 'too_long'));
  } else {
    body.items.forEach((raw: unknown, i: number) => {
      const at = (...loc: (string | number)[]) => ['items', i, ...loc];
      if (!isPlainObject(raw)) return problems.push(problem(at(), 'Input should be a valid dictionary', 'dict_type'));
      for (const k of Object.keys(raw)) if (!ITEM_KEYS.has(k)) problems.push(problem(at(k), 'Extra inputs are not permitted', 'extra_forbidden'));
      const ext = externalIdProblem(raw.external_id, at('external_id'));
      if (ext) problems.push(ext);
      if (typeof raw.entity_type !== 'string') problems.push(problem(at('entity_type'), 'Input should be a valid string', 'string_type'));
      if (raw.project_external_id !== undefined) {
        const p = externalIdProblem(raw.project_external_id, at('project_external_id'));
        if (p) problems.push(p);
      }
      if (raw.project_id !== undefined && (typeof raw.project_id !== 'string' || !isUuid(raw.project_id))) {
        problems.push(problem(at('project_id'), 'Input should be a valid UUID', 'uuid_parsing'));
      }
      if (raw.project_id !== undefined && raw.project_external_id !== undefined) {
        problems.push(problem(at('project_id'), 'Give either project_id or project_external_id, not both', 'value_error'));
      }
      if (raw.status !== undefined && raw.status !== null && typeof raw.status !== 'string') {
        problems.push(problem(at('status'), 'Input should be a valid string', 'string_type'));
      }
      if (!isPlainObject(raw.data)) problems.push(problem(at('data'), 'Input should be a valid dictionary', 'dict_type'));
      items.push({
        externalId: raw.external_id as string,
        entityType: raw.entity_type as string,
        ...(raw.project_external_id !== undefined ? { projectExternalId: raw.project_external_id as string } : {}),
        ...(raw.project_id !== undefined ? { projectId: (raw.project_id as string).toLowerCase() } : {}),
        ...(raw.status !== undefined ? { status: raw.status as string | null } : {}),
        data: isPlainObject(raw.data) ? raw.data : {},
      });
    });
  }
  if (problems.length) throw AppError.invalid(problems);
  return { source: body.source as string, items, dryRun: body.dry_run === true };
}
