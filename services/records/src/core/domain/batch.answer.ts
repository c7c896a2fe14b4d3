/**
 * What a batch answers (docs/api-notes.md, "Batches"): `{"results": [record | true, ...]}`, each
 * record in its client form. The same text is the body of `POST /batch` and of the answer its
 * Idempotency-Key keeps (docs/architecture.md, "Idempotency keys").
 */
import type { StoredAnswer } from '../../kernel/domain/idempotency.types.js';
import { toClientRecord, type RecordView } from '../../kernel/domain/record.types.js';

/** The batch's answer as JSON text. */
export function batchJson(results: readonly (RecordView | true)[]): string {
  return JSON.stringify({ results: results.map((r) => (r === true ? true : toClientRecord(r))) });
}

/** The answer `POST /batch` sends for `json`, as its key keeps it: 200, JSON, the text as it is. */
export function batchAnswer(json: string): StoredAnswer {
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: json };
}
