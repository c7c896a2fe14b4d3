/**
 * Id assignment for one append batch. The log's id is one global, gapless, increasing
 * sequence, so ids are handed out by the single writer rather than by a database sequence
 * (a sequence leaks numbers on rollback): each new event gets `last + 1, last + 2, …`, and
 * an event already in the log, or seen earlier in the same batch, consumes no id.
 */
import type { ContractEvent, StreamEvent } from '@reelbase/lib-platform';

/** A row ready to be inserted into the log. */
export interface LogRow extends StreamEvent {
  id: number;
}

export interface AppendPlan {
  rows: LogRow[];
  /** The highest id after the batch commits (unchanged when nothing is new). */
  last: number;
  /** How many events of the batch were duplicates (already logged or repeated). */
  duplicates: number;
}

/**
 * Plans the rows to insert for `events` (in arrival order) after id `last`, skipping every
 * event whose event_id is in `existing` or appeared earlier in `events`.
 */
export function planAppend(last: number, events: readonly StreamEvent[], existing: ReadonlySet<string>): AppendPlan {
  const seen = new Set<string>();
  const rows: LogRow[] = [];
  let next = last;
  for (const event of events) {
    if (existing.has(event.event_id) || seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    next += 1;
    rows.push({ ...event, id: next });
  }
  return { rows, last: next, duplicates: events.length - rows.length };
}

/** The client shape of an appended row (docs/api-notes.md, Events); `createdAt` is the stored timestamp as formatted by the store. */
export function toContractEvent(row: LogRow, createdAt: string): ContractEvent {
  return {
    id: row.id,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    project_id: row.project_id,
    action: row.action,
    actor: row.actor,
    changes: row.changes,
    created_at: createdAt,
  };
}
