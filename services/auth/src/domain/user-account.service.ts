/**
 * A User's record and its login stay one (docs/architecture.md, "Auth decisions"). The login
 * address is the record's `data.email`; the credential table holds it too, so writes that set
 * it come through here: the address is first CLAIMED (a committed row in `email_claim`, refused
 * when another user has or claims it), then the record is written through records, then the
 * claim is SETTLED (the credential takes the address and the claim goes, in one statement) or,
 * when records refused the write, RELEASED. A claim whose write had an unknown outcome (records
 * timed out, this process died) is resolved later by {@link UserAccountService.resolveStale}
 * from what the record then says. Passwords are changed here too.
 */
import { AppError, newId, type CallContext, type Logger } from '@reelbase/lib-platform';
import { isLoginEmail, normalizeEmail, passwordProblems, requireAdmin, requireUser } from './auth.rules.js';
import type { LoginThrottle } from './login.throttle.js';
import type { PasswordHasher } from './password.hasher.js';
import type { AccountStore, CreatedUser, UserDirectory, UserRecordCreate, UserRecordPatch } from './ports.js';

/** A claim older than this is no longer being written by anyone: its record decides it. */
export const CLAIM_SETTLE_AFTER_MS = 30_000;

export interface UserAccountDeps {
  store: AccountStore;
  users: UserDirectory;
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  logger: Logger;
  now?: () => number;
}

/** What a create or patch without its id carries. */
export type UserCreateInput = Omit<UserRecordCreate, 'id'>;

const emailProblem = (msg: string, type: string) => AppError.invalid([{ loc: ['data', 'email'], msg, type }]);

/**
 * The login address a User write sets, normalised, or undefined when `data` has no `email`
 * (allowed on create only). A non-string, null or malformed address is 422.
 */
export function loginEmailOf(data: Record<string, unknown>, required: boolean): string | undefined {
  const raw = data.email;
  if (raw === undefined && !required) return undefined;
  if (raw === null || raw === undefined) throw emailProblem("a User's email is its login address and cannot be removed", 'missing');
  if (typeof raw !== 'string') throw emailProblem('Input should be a valid string', 'string_type');
  const email = normalizeEmail(raw);
  if (!isLoginEmail(email)) throw emailProblem('value is not a valid email address', 'value_error');
  return email;
}

/** A refusal means records wrote nothing; anything else (down, timed out) may have written. */
function refused(err: unknown): boolean {
  return err instanceof AppError && err.kind !== 'unavailable' && err.kind !== 'internal';
}

export class UserAccountService {
  private readonly now: () => number;

  constructor(private readonly deps: UserAccountDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** `POST /entities/User` (Admin): the record, with its address reserved as a login without a password. */
  async createUser(input: UserCreateInput, ctx: CallContext): Promise<CreatedUser> {
    const admin = requireAdmin(ctx);
    const data = { ...input.data };
    const email = loginEmailOf(data, false);
    if (email !== undefined) data.email = email;
    const id = newId();
    // records honours an explicit id only from a service principal; the Admin stays the creator.
    const actor: CallContext = { ...ctx, principal: { userId: admin.userId, role: 'Admin', authKind: 'service' } };
    const write = () => this.deps.users.createRecord({ ...input, id, data }, actor);
    if (email === undefined) return write();
    await this.deps.store.claim(id, email);
    return this.writeClaimed(id, email, write);
  }

  /** `PATCH /entities/User/{id}` setting `data.email` (Admin): the login moves with the record. */
  async updateUser(patch: UserRecordPatch, ctx: CallContext): Promise<CreatedUser> {
    requireAdmin(ctx);
    const data = { ...patch.data };
    const email = loginEmailOf(data, true)!;
    data.email = email;
    await this.deps.store.claim(patch.id, email);
    return this.writeClaimed(patch.id, email, () => this.deps.users.updateRecord({ ...patch, data }, ctx));
  }

  /** `POST /auth/password`: the caller's own; a wrong old password is 403 and counts as a failed login. */
  async changeOwnPassword(oldPassword: string, newPassword: string, ctx: CallContext): Promise<void> {
    const { store, hasher, throttle, logger } = this.deps;
    const principal = requireUser(ctx);
    const problems = passwordProblems(newPassword, 'new_password');
    if (problems.length) throw AppError.invalid(problems);
    const credential = await store.findByUser(principal.userId);
    // Guessing the old password is guessing the login: the same per-email limit applies.
    const attempt = await throttle.claim(credential?.email ?? `user:${principal.userId}`);
    let ok: boolean;
    try {
      ok = credential?.passwordHash ? await hasher.verify(oldPassword, credential.passwordHash) : await hasher.verifyDummy(oldPassword);
    } catch (err) {
      await attempt.abandoned().catch((e: unknown) => logger.warn({ err: e }, 'could not release a password-change reservation'));
      throw err;
    }
    if (!ok) {
      await attempt.failed();
      throw new AppError('forbidden', 'the old password is wrong');
    }
    await attempt.succeeded().catch((err: unknown) => logger.warn({ err }, 'could not clear login failures'));
    await store.setPasswordHash(principal.userId, await hasher.hash(newPassword));
    logger.info({ user_id: principal.userId, request_id: ctx.requestId }, 'password changed by its user');
  }

  /** `PUT /auth/users/{id}/password` (Admin): afterwards the user can log in with it. */
  async setPassword(userId: string, password: string, ctx: CallContext): Promise<void> {
    const { store, users, hasher, logger } = this.deps;
    requireAdmin(ctx);
    const problems = passwordProblems(password, 'password');
    if (problems.length) throw AppError.invalid(problems);
    const user = await users.find(userId);
    if (!user) throw AppError.notFound(`User ${userId} not found`);
    const hash = await hasher.hash(password);
    if (!(await store.setPasswordHash(user.id, hash))) {
      // A User with no credential yet (written before logins followed records): its address becomes one.
      const email = normalizeEmail(user.email);
      if (!isLoginEmail(email)) throw AppError.conflict('no_login_email', 'the User has no valid email to log in with; set data.email first');
      await store.insertCredential(user.id, email, hash);
    }
    logger.info({ user_id: user.id, request_id: ctx.requestId }, 'password set by an Admin');
  }

  /**
   * Finishes every claim older than {@link CLAIM_SETTLE_AFTER_MS} (its writer died or timed out):
   * settled when the record carries the address, else released. Returns how many it finished;
   * a claim whose record cannot be read now stays for the next round.
   */
  async resolveStale(): Promise<number> {
    const stale = await this.deps.store.claimsBefore(new Date(this.now() - CLAIM_SETTLE_AFTER_MS));
    let done = 0;
    for (const claim of stale) {
      try {
        await this.resolve(claim.userId, claim.email);
        done++;
      } catch (err) {
        this.deps.logger.warn({ err, user_id: claim.userId }, 'could not resolve a login address claim; retrying later');
      }
    }
    return done;
  }

  private async resolve(userId: string, email: string): Promise<void> {
    const user = await this.deps.users.find(userId);
    if (user && normalizeEmail(user.email) === email) await this.deps.store.settle(userId, email);
    else await this.deps.store.release(userId, email);
  }

  private async writeClaimed(userId: string, email: string, write: () => Promise<CreatedUser>): Promise<CreatedUser> {
    let written: CreatedUser;
    try {
      written = await write();
    } catch (err) {
      // Refused: nothing was written, so the address goes back. Otherwise records may still
      // commit it: the claim stays until resolveStale reads the record.
      if (refused(err)) {
        await this.deps.store
          .release(userId, email)
          .catch((e: unknown) => this.deps.logger.warn({ err: e, user_id: userId }, 'could not release a login address claim; it is resolved later'));
      }
      throw err;
    }
    await this.deps.store.settle(userId, email);
    return written;
  }
}
