/**
 * The roles a route admits whatever its input, and the refusal a caller of another role gets
 * (docs/api-notes.md, "Roles and who may write"). A route declares it as `allow` (http/route.ts);
 * the router applies it and the OpenAPI document lists its roles.
 */
import { AppError, ROLES, type Role } from '@reelbase/lib-platform';
import type { AuthedPrincipal } from './authed.principal.js';

export interface RoleRule {
  /** The roles that may call the route. */
  roles: readonly Role[];
  /** Completes the refusal: "only an Admin may <to>", "a Viewer may not <to>". */
  to: string;
}

const named = (role: string) => `${/^[AEIOU]/.test(role) ? 'an' : 'a'} ${role}`;

/** The roles of `rule` in the order of ROLES (the order they are documented in). */
export function rolesOf(rule: RoleRule): Role[] {
  return ROLES.filter((r) => rule.roles.includes(r));
}

/**
 * The 403 message of `rule`: the one role left out when there is one ("a Viewer may not submit
 * farm jobs"), else the roles let in ("only an Admin, Supervisor or Coordinator may manage share links").
 */
export function refusalOf(rule: RoleRule): string {
  const allowed = rolesOf(rule);
  const others = ROLES.filter((r) => !allowed.includes(r));
  if (others.length === 1) return `${named(others[0]!)} may not ${rule.to}`;
  if (allowed.length === 0) return `no role may ${rule.to}`;
  const last = allowed.at(-1)!;
  const list = allowed.length === 1 ? last : `${allowed.slice(0, -1).join(', ')} or ${last}`;
  return `only ${named(list)} may ${rule.to}`;
}

/** Throws 403 `forbidden` unless `principal`'s role is one of `rule`'s. */
export function assertAllowed(principal: AuthedPrincipal, rule: RoleRule): void {
  if (!(rule.roles as readonly string[]).includes(principal.role)) throw new AppError('forbidden', refusalOf(rule));
}

/**
 * Why an agent API key (`"scope": "agent"`, docs/api-notes.md "Authentication") is refused on any route
 * but the farm and sitesync agent routes (a route's `agent`, http/route.ts), and on the WebSocket.
 */
export const AGENT_KEY_REFUSAL = 'an agent key calls only the farm and sitesync agent routes';

/** Throws 403 `forbidden` when `principal` is an agent key and the route is not an agent route. */
export function assertAgentMay(principal: AuthedPrincipal, agentRoute: boolean): void {
  if (principal.scope === 'agent' && !agentRoute) throw new AppError('forbidden', AGENT_KEY_REFUSAL);
}
