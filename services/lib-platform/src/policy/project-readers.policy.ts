/**
 * Whose membership decides what a caller reads of restricted projects (docs/api-notes.md,
 * "Restricted projects"). Records applies it in SQL; the gateway in its event-stream filter.
 */
import type { Principal } from '../context.js';

/**
 * The user whose membership decides what `principal` may read, or null when it reads every
 * project: an Admin, a service acting for itself, a share-link guest (whose reach is the shared
 * playlist, checked by the share rules), and a call without a principal. An API key acts as its user.
 */
export function membershipOf(principal: Principal | undefined): string | null {
  if (!principal) return null;
  if (principal.role === 'Admin' || principal.role === 'Service' || principal.role === 'Guest') return null;
  if (principal.authKind === 'service') return null;
  return principal.userId;
}
