/**
 * The answer of a work view: records spliced into `{"items": [...]}` as JSON text, their
 * `data` never re-parsed (see mappers/record.mapper.ts).
 */
import type { recordsv1 } from '@reelbase/proto';
import { Reply } from '../http/route.js';
import { recordJson } from '../mappers/record.mapper.js';

/** `{"items": [...records], ...extra}` as JSON text. */
export function itemsReply(records: readonly recordsv1.Record[], extra?: Record<string, unknown>): Reply {
  const tail = extra ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  return Reply.rawJson(`{"items":[${records.map((r) => recordJson(r)).join(',')}]${tail}}`);
}
