/**
 * Registration. While no credential exists anyone may register and becomes the first
 * Admin; afterwards only an Admin may register others. The credential and the User record
 * are written together: the record is created inside the credential's transaction, so a
 * records failure rolls the credential back, and a failed commit retires the record.
 */
import { AppError, newId, systemContext, type CallContext, type Logger, type Role } from '@reelbase/lib-platform';
import { isAdmin, normalizeEmail, registrationProblems, type RegistrationInput } from './auth.rules.js';
import type { LoginTokenIssuer } from './login-token.issuer.js';
import type { PasswordHasher } from './password.hasher.js';
import type { CreatedUser, RegistrationStore, UserDirectory } from './ports.js';

export interface RegistrationResult {
  userId: string;
  role: Role;
  recordJson: string;
  /** Set only for the first (bootstrap) user. */
  accessToken?: string;
  expiresIn?: number;
}

export interface RegistrationDeps {
  credentials: RegistrationStore;
  users: UserDirectory;
  hasher: PasswordHasher;
  tokens: LoginTokenIssuer;
  logger: Logger;
}

const forbidden = () => new AppError('forbidden', 'only an Admin may register users once the first user exists');

export class RegistrationService {
  constructor(private readonly deps: RegistrationDeps) {}

  /** True once the first user exists (anonymous registration is closed for good). */
  bootstrapped(): Promise<boolean> {
    return this.deps.credentials.anyExists();
  }

  async register(input: RegistrationInput, ctx: CallContext): Promise<RegistrationResult> {
    const { credentials, users, hasher, tokens, logger } = this.deps;
    // Role check before validation (the order of checks in docs/api-notes.md: 401, 403, 422); re-checked under the lock.
    if (!isAdmin(ctx.principal) && (await credentials.anyExists())) throw forbidden();
    const problems = registrationProblems(input);
    if (problems.length) throw AppError.invalid(problems);

    const email = normalizeEmail(input.email);
    const passwordHash = await hasher.hash(input.password);
    const userId = newId();
    // Written inside the transaction callback; an object so the compiler sees the writes.
    const done: { created?: CreatedUser } = {};
    let actor: CallContext = systemContext(ctx.requestId);
    let outcome: { first: boolean; role: Role };
    try {
      outcome = await credentials.register(async (tx) => {
        const first = !(await tx.anyExists());
        if (!first && !isAdmin(ctx.principal)) throw forbidden();
        if (await tx.emailTaken(email)) throw AppError.conflict('duplicate_code', 'a user with this email already exists (the email is the login code)');
        await tx.insert({ userId, email, passwordHash });
        const role: Role = first ? 'Admin' : ((input.role as Role | undefined) ?? 'Artist');
        // records honours an explicit id only from a service principal; an Admin's call
        // keeps the Admin as the record's creator.
        if (!first) actor = { ...ctx, principal: { userId: ctx.principal!.userId, role: 'Admin', authKind: 'service' } };
        done.created = await users.create({ id: userId, name: input.name.trim(), email, role }, actor);
        return { first, role };
      });
    } catch (err) {
      // The record exists but its credential did not commit: undo the record.
      if (done.created) {
        const orphan = done.created.id;
        await users
          .retire(orphan, actor)
          .catch((retireErr: unknown) => logger.error({ err: retireErr, user_id: orphan }, 'could not retire the User record of a failed registration'));
      }
      throw err;
    }
    const { first, role } = outcome;
    const result: RegistrationResult = { userId, role, recordJson: done.created!.recordJson };
    if (first) {
      const issued = await tokens.issue(userId);
      result.accessToken = issued.token;
      result.expiresIn = issued.expiresIn;
    }
    logger.info({ user_id: userId, role, bootstrap: first, request_id: ctx.requestId }, 'user registered');
    return result;
  }
}
