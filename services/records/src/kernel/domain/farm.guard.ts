/**
 * What the farm owns of a FarmJob record, which every other writer of records (the record routes,
 * sync) must leave alone (docs/farm.md).
 */

/** Fields of a FarmJob only the farm routes write (the generic /entities routes refuse them). */
export const FARM_OWNED_FIELDS: readonly string[] = [
  'kind',
  'pool',
  'priority',
  'frames',
  'chunk_size',
  'payload',
  'version_id',
  'task_id',
  'max_attempts',
  'depends_on',
  'manager',
  'external_id',
  'chunks_total',
  'chunks_done',
  'chunks_failed',
  'attempts_failed',
  'progress',
  'error',
];

/**
 * Why a generic /entities write of a FarmJob is refused (docs/api-notes.md, "Farm"), or
 * undefined: creates go through POST /farm/jobs; a patch may not set the status or a field the
 * farm owns (name, active, thumbnail_id and fields added at run time stay open).
 */
export function farmRecordWriteRefusal(op: 'create' | 'update', statusGiven: boolean, data: Record<string, unknown> | undefined): string | undefined {
  if (op === 'create') return 'FarmJob records are created with POST /farm/jobs';
  if (statusGiven) return "a FarmJob's status is changed only by the farm routes (POST /farm/jobs/{id}/pause, resume, cancel, retry or report)";
  const owned = data ? FARM_OWNED_FIELDS.filter((f) => Object.hasOwn(data, f)) : [];
  if (owned.length) return `${owned.join(', ')} of a FarmJob ${owned.length > 1 ? 'are' : 'is'} written only by the farm routes`;
  return undefined;
}

/** Statuses in which a FarmJob may be retired through DELETE /entities/FarmJob/{id}. */
export const FARM_FINAL_STATUSES: readonly string[] = ['done', 'failed', 'cancelled'];
