import { describe, expect, it } from 'vitest';
import { AppError, createLogger } from '@reelbase/lib-platform';
import type { LoginTokenIssuer } from './login-token.issuer.js';
import { LoginService } from './login.service.js';
import { LoginThrottle } from './login.throttle.js';
import { PasswordHasher } from './password.hasher.js';
import type { LoginFailureStore, Reservation, UserDirectory, UserView } from './ports.js';

/** Reservations and failures in memory, counted like the repository does. */
class Attempts implements LoginFailureStore {
  rows: { id: string; email: string; pending: boolean }[] = [];
  private n = 0;
  async reserve(email: string, _at: Date, _since: Date, max: number): Promise<Reservation> {
    const mine = this.rows.filter((r) => r.email === email);
    if (mine.length >= max)
      return { granted: false, failures: mine.filter((r) => !r.pending).map(() => Date.now()), pending: mine.filter((r) => r.pending).length };
    const id = String(++this.n);
    this.rows.push({ id, email, pending: true });
    return { granted: true, id };
  }
  async fail(id: string) {
    this.rows.find((r) => r.id === id)!.pending = false;
  }
  async release(id: string) {
    this.rows = this.rows.filter((r) => r.id !== id);
  }
  async clear(email: string) {
    this.rows = this.rows.filter((r) => r.email !== email || r.pending);
  }
}

/** Counts the scrypt runs behind each verification. */
class CountingHasher extends PasswordHasher {
  runs = 0;
  override async verify(password: string, encoded: string) {
    this.runs++;
    return super.verify(password, encoded);
  }
}

async function setup(user: Partial<UserView> = {}) {
  const hasher = new CountingHasher(1024);
  const passwordHash = await hasher.hash('right-password');
  const attempts = new Attempts();
  let lookupFails = false;
  const users = { find: async (id: string) => ({ id, email: 'a@x.io', role: 'Artist', loginEnabled: true, ...user }) } as unknown as UserDirectory;
  const service = new LoginService({
    credentials: {
      findByEmail: async (email) => {
        if (lookupFails) throw AppError.unavailable('database is unavailable');
        return email === 'a@x.io' ? { userId: 'u1', passwordHash } : null;
      },
    },
    users,
    hasher,
    tokens: { issue: async (userId: string) => ({ token: `token-for-${userId}`, expiresIn: 60 }) } as unknown as LoginTokenIssuer,
    throttle: new LoginThrottle(attempts, 10, { pollMs: 1 }),
    logger: createLogger('auth-test', 'silent'),
  });
  return { service, hasher, attempts, failLookups: () => (lookupFails = true) };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: AppError) => [e.kind, e.code, e.message],
  );

describe('LoginService', () => {
  it('an unknown email costs one scrypt run and gets the same answer as a wrong password; both count as failures', async () => {
    const { service, hasher, attempts } = await setup();
    hasher.runs = 0;
    const unknown = await refusal(service.login('nobody@x.io', 'right-password'));
    expect(hasher.runs).toBe(1);
    const wrong = await refusal(service.login('a@x.io', 'wrong-password'));
    expect(hasher.runs).toBe(2);
    expect(unknown).toEqual(['unauthenticated', 'unauthenticated', 'invalid email or password']);
    expect(wrong).toEqual(unknown);
    expect(attempts.rows.map((r) => [r.email, r.pending])).toEqual([
      ['nobody@x.io', false],
      ['a@x.io', false],
    ]);
  });

  it('a right password issues a token and leaves nothing counted', async () => {
    const { service, attempts } = await setup();
    await refusal(service.login('a@x.io', 'wrong-password'));
    await expect(service.login('A@X.io', 'right-password')).resolves.toEqual({ token: 'token-for-u1', expiresIn: 60 });
    expect(attempts.rows).toEqual([]);
  });

  it('a user who may not log in is refused like a wrong password, and it counts', async () => {
    const { service, attempts } = await setup({ loginEnabled: false });
    expect(await refusal(service.login('a@x.io', 'right-password'))).toEqual(['unauthenticated', 'unauthenticated', 'invalid email or password']);
    expect(attempts.rows).toEqual([expect.objectContaining({ pending: false })]);
  });

  it('a check that could not run does not count', async () => {
    const { service, attempts, failLookups } = await setup();
    failLookups();
    expect((await refusal(service.login('a@x.io', 'right-password')))![0]).toBe('unavailable');
    expect(attempts.rows).toEqual([]);
  });
});
