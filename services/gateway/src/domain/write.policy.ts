/**
 * Who may write what (docs/api-notes.md, "Roles and who may write"). Runs before body
 * validation, so it reads the raw body defensively. The rule itself is lib-platform's
 * recordWriteRefusal, which records also applies to each request of a batch.
 */
import { AppError, recordWriteRefusal, type RecordWriteOp } from '@reelbase/lib-platform';
import type { AuthedPrincipal } from './authed.principal.js';

export type WriteOp = RecordWriteOp;

function dataOf(body: unknown): Record<string, unknown> | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const data = (body as Record<string, unknown>).data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  return data as Record<string, unknown>;
}

/** Throws 403 unless `principal` may perform `op` on a record of `entityType`. */
export function assertMayWrite(principal: AuthedPrincipal, entityType: string, op: WriteOp, body: unknown): void {
  const why = recordWriteRefusal(principal, entityType, op, op === 'create' || op === 'update' ? dataOf(body) : undefined);
  if (why) throw new AppError('forbidden', why);
}
