import { describe, expect, it } from 'vitest';
import { AppError, createLogger, type CallContext } from '@reelbase/lib-platform';
import { LoginTokenIssuer } from './login-token.issuer.js';
import { PasswordHasher } from './password.hasher.js';
import { RegistrationService } from './registration.service.js';
import { SigningKeyRing } from './signing-key.ring.js';
import type { CreatedUser, NewUser, RegistrationStore, RegistrationTx, StoredSigningKey, UserDirectory, UserView } from './ports.js';

/** Credentials in memory with transaction semantics: writes land only when the commit succeeds. */
class MemoryCredentials implements RegistrationStore {
  rows = new Map<string, { userId: string; passwordHash: string }>();
  failCommit = false;
  async anyExists() {
    return this.rows.size > 0;
  }
  async register<T>(fn: (tx: RegistrationTx) => Promise<T>): Promise<T> {
    const pending = new Map(this.rows);
    const result = await fn({
      anyExists: async () => pending.size > 0,
      emailTaken: async (email) => pending.has(email),
      insert: async (row) => void pending.set(row.email, row),
    });
    if (this.failCommit) throw AppError.unavailable('database is unavailable');
    this.rows = pending;
    return result;
  }
}

class MemoryUsers implements UserDirectory {
  records = new Map<string, { user: NewUser; retired: boolean; ctx: CallContext }>();
  fail = false;
  async create(user: NewUser, ctx: CallContext): Promise<CreatedUser> {
    if (this.fail) throw AppError.unavailable('records is unavailable');
    this.records.set(user.id, { user, retired: false, ctx });
    return { id: user.id, recordJson: JSON.stringify({ id: user.id, entityType: 'User' }) };
  }
  async find(id: string): Promise<UserView | null> {
    const r = this.records.get(id);
    return r && !r.retired ? { id, email: r.user.email, role: r.user.role, loginEnabled: true } : null;
  }
  async retire(id: string) {
    this.records.get(id)!.retired = true;
  }
  async createRecord(): Promise<CreatedUser> {
    throw new Error('record writes are not part of registration');
  }
  async updateRecord(): Promise<CreatedUser> {
    throw new Error('record writes are not part of registration');
  }
}

async function setup() {
  const keys: StoredSigningKey[] = [];
  const ring = new SigningKeyRing({
    listUsable: async () => [...keys].reverse(),
    rotate: async (k) => keys.push(k) - 1,
    ensureOne: async (g) => void (keys.length || keys.push(await g())),
  });
  await ring.init();
  const credentials = new MemoryCredentials();
  const users = new MemoryUsers();
  const service = new RegistrationService({
    credentials,
    users,
    hasher: new PasswordHasher(256),
    tokens: new LoginTokenIssuer(ring, 'reelbase', 60),
    logger: createLogger('auth-test', 'silent'),
  });
  return { credentials, users, service };
}

const anonymous: CallContext = { requestId: 'r1' };
const admin = (userId: string): CallContext => ({ requestId: 'r2', principal: { userId, role: 'Admin', authKind: 'token' } });

describe('RegistrationService', () => {
  it('makes the first user an Admin with a token, created by a service principal', async () => {
    const { users, service } = await setup();
    const r = await service.register({ email: ' Boss@Studio.io ', password: 'long enough', name: 'Boss', role: 'Viewer' }, anonymous);
    expect(r.role).toBe('Admin');
    expect(r.accessToken).toBeTruthy();
    const rec = users.records.get(r.userId)!;
    expect(rec.user).toMatchObject({ email: 'boss@studio.io', role: 'Admin', name: 'Boss' });
    expect(rec.ctx.principal?.authKind).toBe('service');
  });

  it('afterwards needs an Admin (403 before validation) and returns no token', async () => {
    const { users, service } = await setup();
    const boss = await service.register({ email: 'boss@studio.io', password: 'long enough', name: 'Boss' }, anonymous);
    await expect(service.register({ email: 'bad', password: 'x', name: '' }, anonymous)).rejects.toMatchObject({ kind: 'forbidden' });
    const viewer: CallContext = { requestId: 'r', principal: { userId: boss.userId, role: 'Viewer', authKind: 'token' } };
    await expect(service.register({ email: 'a@b.io', password: 'long enough', name: 'A' }, viewer)).rejects.toMatchObject({ kind: 'forbidden' });
    const r = await service.register({ email: 'art@studio.io', password: 'long enough', name: 'Art' }, admin(boss.userId));
    expect(r.role).toBe('Artist');
    expect(r.accessToken).toBeUndefined();
    expect(users.records.get(r.userId)!.ctx.principal).toMatchObject({ userId: boss.userId, authKind: 'service' });
  });

  it('reports every validation problem at once', async () => {
    const { service } = await setup();
    const err = (await service.register({ email: 'nope', password: 'short', name: ' ', role: 'King' }, anonymous).catch((e) => e)) as AppError;
    expect(err.kind).toBe('invalid');
    expect(err.problems.map((p) => [p.loc.join('.'), p.type])).toEqual([
      ['email', 'value_error'],
      ['password', 'string_too_short'],
      ['name', 'missing'],
      ['role', 'enum'],
    ]);
  });

  it('refuses a duplicate email (any case) with duplicate_code', async () => {
    const { service } = await setup();
    const boss = await service.register({ email: 'boss@studio.io', password: 'long enough', name: 'Boss' }, anonymous);
    await expect(service.register({ email: 'BOSS@studio.io', password: 'long enough', name: 'B2' }, admin(boss.userId))).rejects.toMatchObject({
      kind: 'conflict',
      code: 'duplicate_code',
    });
  });

  it('leaves no credential when records fails', async () => {
    const { credentials, users, service } = await setup();
    users.fail = true;
    await expect(service.register({ email: 'boss@studio.io', password: 'long enough', name: 'Boss' }, anonymous)).rejects.toMatchObject({
      kind: 'unavailable',
    });
    expect(credentials.rows.size).toBe(0);
  });

  it('retires the User record when the credential fails to commit', async () => {
    const { credentials, users, service } = await setup();
    credentials.failCommit = true;
    await expect(service.register({ email: 'boss@studio.io', password: 'long enough', name: 'Boss' }, anonymous)).rejects.toMatchObject({
      kind: 'unavailable',
    });
    expect(credentials.rows.size).toBe(0);
    const [rec] = [...users.records.values()];
    expect(rec?.retired).toBe(true);
  });
});
