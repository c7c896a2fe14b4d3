/**
 * The login rule of the Users a sync import writes (docs/api-notes.md, "Sync"). A User's `data.email`
 * is its login address, which auth keeps with the record: `POST /entities/User` stores it trimmed and
 * lower-cased, refuses an address that is not one, and refuses one another User has in any case
 * (`duplicate_code`); changing it moves the login, which only `PATCH /entities/User/{id}` does. An
 * import applies the same rule to each User item, as a 422 at the item's `data.email`, so every
 * address of the batch that is refused is listed at once.
 */
import { EMAIL_TAKEN, isLoginEmail, normalizeEmail, type Problem } from '@reelbase/lib-platform';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { SyncItem } from './sync.input.js';

/** What the rule needs of each item's record: its id, and the record it updates when it is mapped. */
export interface ItemRecord {
  id: string;
  current?: StoredRecord;
}

/** An email the address rule looks at: a User item that names `email`. */
export const namesUserEmail = (item: SyncItem): boolean => item.entityType === 'User' && Object.hasOwn(item.data, 'email');

/**
 * The address each User item stores (by item index) and the problems of the batch's addresses, located
 * at `["items", i, "data", "email"]`. `holders` are the Users' stored addresses (retired Users keep
 * theirs: their login is still reserved). A value that is not a string is left to the schema's check.
 */
export function checkUserEmails(
  items: readonly SyncItem[],
  records: readonly ItemRecord[],
  holders: readonly { id: string; email: string }[],
): { emails: Map<number, string>; problems: Problem[] } {
  const heldBy = new Map<string, string[]>();
  for (const h of holders) {
    const email = normalizeEmail(h.email);
    heldBy.set(email, [...(heldBy.get(email) ?? []), h.id]);
  }
  const emails = new Map<number, string>();
  const problems: Problem[] = [];
  const firstItem = new Map<string, number>();
  items.forEach((item, i) => {
    if (!namesUserEmail(item)) return;
    const loc = ['items', i, 'data', 'email'];
    const raw = item.data.email;
    if (raw === null) {
      problems.push({ loc, msg: "a User's email is its login address and cannot be removed", type: 'missing' });
      return;
    }
    if (typeof raw !== 'string') return;
    const email = normalizeEmail(raw);
    if (!isLoginEmail(email)) {
      problems.push({ loc, msg: 'value is not a valid email address', type: 'value_error' });
      return;
    }
    const { id, current } = records[i]!;
    if (current) {
      const stored = current.data.email;
      if (typeof stored === 'string' && normalizeEmail(stored) === email) emails.set(i, stored);
      else {
        problems.push({
          loc,
          msg: `a User's email is its login address: an import does not change it (PATCH /entities/User/${current.id} moves the login with it)`,
          type: 'value_error',
        });
      }
      return;
    }
    const first = firstItem.get(email);
    if (first !== undefined) {
      problems.push({ loc, msg: `${EMAIL_TAKEN}: items[${first}] has it`, type: 'duplicate_code' });
    } else if ((heldBy.get(email) ?? []).some((holder) => holder !== id)) {
      problems.push({ loc, msg: EMAIL_TAKEN, type: 'duplicate_code' });
    } else {
      firstItem.set(email, i);
      emails.set(i, email);
    }
  });
  return { emails, problems };
}
