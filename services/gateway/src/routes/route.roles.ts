/**
 * Who may call which route (docs/api-notes.md, "Roles and who may write"), in one place: the role
 * sets routes name in `allow` (domain/role.rule.ts; the router refuses any other role with 403 and
 * the OpenAPI text lists them), and the checks that depend on the input, used as `authorize` (or
 * `authorizeAnonymous`) where a role alone does not decide.
 */
import { AppError, mayReadUserViews, ROLES, USER_VIEWS_NOT_YOURS, type CallContext, type Role } from '@reelbase/lib-platform';
import type { AuthedPrincipal } from '../domain/authed.principal.js';
import type { BootstrapState } from '../domain/bootstrap.state.js';
import { assertMayWrite, type WriteOp } from '../domain/write.policy.js';
import type { RawInput } from '../http/route.js';

/** Admins only: users, signing keys, webhooks, sync sites, imports, the API port's metrics. */
export const ADMIN: readonly Role[] = ['Admin'];

/** The roles that manage others' work: share links, anyone's farm jobs. */
export const MANAGERS: readonly Role[] = ['Admin', 'Supervisor', 'Coordinator'];

/** Every role but Viewer: farm work, site sync requests, claims and reports. */
export const NOT_VIEWER: readonly Role[] = ROLES.filter((r) => r !== 'Viewer');

/**
 * A record write of the type in the path (create, update, delete, revive), judged with the raw
 * body (domain/write.policy.ts).
 */
export function writesRecord(op: WriteOp): (p: AuthedPrincipal, raw: RawInput) => void {
  return (p, raw) => assertMayWrite(p, raw.params.entity_type ?? '', op, raw.body);
}

/** A user's work views: the user of the path themself, or a role that may read anyone's. */
export function readsUserViews(p: AuthedPrincipal, raw: RawInput): void {
  if (!mayReadUserViews(p, raw.params.id ?? '')) throw new AppError('forbidden', USER_VIEWS_NOT_YOURS);
}

/** Registering without a token: only the first user, while no user exists (asked of auth until one does). */
export function registersFirstUserOnly(bootstrap: BootstrapState): (ctx: CallContext) => Promise<void> {
  return async (ctx) => {
    if (await bootstrap.isDone(ctx)) throw new AppError('forbidden', 'only an Admin may register users once the first user exists');
  };
}

/** A project's addon layer or pin: Admin or Supervisor; the studio's layer (no `project_id`): Admin. */
export function changesAddonSettings(p: AuthedPrincipal, raw: RawInput): void {
  const projectId = raw.query?.project_id;
  const studio = projectId === undefined || projectId === '';
  const roles: readonly Role[] = studio ? ADMIN : ['Admin', 'Supervisor'];
  if (!(roles as readonly string[]).includes(p.role))
    throw new AppError('forbidden', `changing ${studio ? 'studio' : 'project'} addon settings is for ${roles.join(' and ')} only`);
}
