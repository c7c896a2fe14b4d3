/**
 * Who may write records of which type (docs/api-notes.md, "Roles and who may write"): the
 * gateway asks it before a single write's body is validated, and records asks it for each
 * request of a batch, in order, so both answer the same 403.
 */
import type { Principal } from '../context.js';
import { fieldWriteRefusal } from './review-write.policy.js';
import { mayWriteTimeLogOf, TIME_LOG_NOT_YOURS } from './timelog.policy.js';

export type RecordWriteOp = 'create' | 'update' | 'delete' | 'revive';

const ADMIN_ONLY: ReadonlySet<string> = new Set(['Project', 'User']);
/** Publishing, notes and own time: open to every authenticated role. */
const ANY_ROLE: ReadonlySet<string> = new Set(['Version', 'Product', 'Representation', 'Note', 'TimeLog']);

type Who = Pick<Principal, 'role' | 'authKind' | 'userId' | 'via'>;

/**
 * Why `principal` may not perform `op` on a record of `entityType` with `data` (a create's or
 * update's data, when it is an object), or undefined when it may. Who wrote a stored Note or
 * TimeLog, and whether a Playlist has a live share link, only records knows: it answers those
 * itself.
 */
export function recordWriteRefusal(
  principal: Who,
  entityType: string,
  op: RecordWriteOp,
  data: Readonly<Record<string, unknown>> | undefined,
): string | undefined {
  const role = principal.role;
  if (role !== 'Admin' && role !== 'Service') {
    if (ADMIN_ONLY.has(entityType)) return `only an Admin may write ${entityType} records`;
    if (entityType === 'TimeLog') {
      // An explicit data.user naming someone else is refused here, before validation.
      if (data && Object.hasOwn(data, 'user') && !mayWriteTimeLogOf(principal, data.user)) return TIME_LOG_NOT_YOURS;
    } else if (!ANY_ROLE.has(entityType) && role === 'Viewer') {
      return `a Viewer may not write ${entityType} records`;
    }
  }
  // Fields no person writes (a Representation's transcode fields, a Note's verdict, guest_name
  // and another user as author), Admin included.
  return data && (op === 'create' || op === 'update') ? fieldWriteRefusal(principal, entityType, data) : undefined;
}
