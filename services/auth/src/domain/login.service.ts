/**
 * Login: email and password for a signed token. Unknown emails, wrong passwords and users
 * who may not log in all get the same answer, and unknown emails still pay for one scrypt
 * so timing does not tell them apart.
 */
import { AppError, type Logger } from '@reelbase/lib-platform';
import { normalizeEmail } from './auth.rules.js';
import type { IssuedToken, LoginTokenIssuer } from './login-token.issuer.js';
import type { LoginThrottle } from './login.throttle.js';
import type { PasswordHasher } from './password.hasher.js';
import type { CredentialLookup, UserDirectory } from './ports.js';

export interface LoginDeps {
  credentials: CredentialLookup;
  users: UserDirectory;
  hasher: PasswordHasher;
  tokens: LoginTokenIssuer;
  throttle: LoginThrottle;
  logger: Logger;
}

const rejected = () => new AppError('unauthenticated', 'invalid email or password');

export class LoginService {
  constructor(private readonly deps: LoginDeps) {}

  async login(rawEmail: string, password: string): Promise<IssuedToken> {
    const { credentials, users, hasher, tokens, throttle, logger } = this.deps;
    const email = normalizeEmail(rawEmail);
    // A slot is reserved before the password is checked, so parallel guesses cannot pass the limit.
    const attempt = await throttle.claim(email);
    let userId: string;
    try {
      const credential = await credentials.findByEmail(email);
      // A User created as a record has no password yet: refused like an unknown email.
      const ok = credential?.passwordHash ? await hasher.verify(password, credential.passwordHash) : await hasher.verifyDummy(password);
      const user = credential && ok ? await users.find(credential.userId) : null;
      if (!credential || !ok || !user || !user.loginEnabled) {
        await attempt.failed();
        throw rejected();
      }
      userId = credential.userId;
    } catch (err) {
      // A lookup that failed (database or records down) says nothing about the password.
      if (!(err instanceof AppError && err.kind === 'unauthenticated')) {
        await attempt.abandoned().catch((e: unknown) => logger.warn({ err: e }, 'could not release a login reservation'));
      }
      throw err;
    }
    // Only failures count: a right password gives its slot back and clears the email's failures.
    await attempt.succeeded().catch((err: unknown) => logger.warn({ err }, 'could not clear login failures'));
    return tokens.issue(userId);
  }
}
