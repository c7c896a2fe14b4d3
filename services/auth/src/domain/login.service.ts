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
import type { UserDirectory } from './user.directory.js';

export interface CredentialLookup {
  findByEmail(email: string): Promise<{ userId: string; passwordHash: string } | null>;
}

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
    await throttle.claim(email);
    const credential = await credentials.findByEmail(email);
    const ok = credential ? await hasher.verify(password, credential.passwordHash) : await hasher.verifyDummy(password);
    // A wrong password leaves the claim counted as the failure.
    if (!credential || !ok) throw rejected();
    const user = await users.find(credential.userId);
    if (!user || !user.loginEnabled) throw rejected();
    await throttle.reset(email).catch((err: unknown) => logger.warn({ err }, 'could not clear login failures'));
    return tokens.issue(credential.userId);
  }
}
