import { describe, expect, it } from 'vitest';
import { AppError, createLogger, type CallContext } from '@reelbase/lib-platform';
import { LoginThrottle } from './login.throttle.js';
import { PasswordHasher } from './password.hasher.js';
import { CLAIM_SETTLE_AFTER_MS, UserAccountService } from './user-account.service.js';
import type {
  AccountCredential,
  AccountStore,
  CreatedUser,
  LoginFailureStore,
  Reservation,
  UserDirectory,
  UserRecordCreate,
  UserRecordPatch,
  UserView,
} from './ports.js';

const taken = () => AppError.conflict('duplicate_code', 'taken');

/** Credentials and claims in memory, with the repository's rules. */
class MemoryAccounts implements AccountStore {
  credentials = new Map<string, AccountCredential>();
  claims = new Map<string, { email: string; at: number }>();
  constructor(private readonly clock: () => number) {}
  private holders(email: string): string[] {
    const out = [...this.credentials.values()].filter((c) => c.email === email).map((c) => c.userId);
    for (const [userId, c] of this.claims) if (c.email === email) out.push(userId);
    return out;
  }
  async findByUser(userId: string) {
    return this.credentials.get(userId) ?? null;
  }
  async claim(userId: string, email: string) {
    if (this.holders(email).some((h) => h !== userId)) throw taken();
    const own = this.claims.get(userId);
    if (own && own.email === email) return;
    if (own) throw AppError.conflict('email_change_pending', 'pending');
    this.claims.set(userId, { email, at: this.clock() });
  }
  async settle(userId: string, email: string) {
    if (this.claims.get(userId)?.email !== email) return;
    this.claims.delete(userId);
    const c = this.credentials.get(userId);
    this.credentials.set(userId, { userId, email, passwordHash: c?.passwordHash ?? null });
  }
  async release(userId: string, email: string) {
    if (this.claims.get(userId)?.email === email) this.claims.delete(userId);
  }
  async claimsBefore(before: Date) {
    return [...this.claims].filter(([, c]) => c.at < before.getTime()).map(([userId, c]) => ({ userId, email: c.email }));
  }
  async setPasswordHash(userId: string, passwordHash: string) {
    const c = this.credentials.get(userId);
    if (!c) return false;
    c.passwordHash = passwordHash;
    return true;
  }
  async insertCredential(userId: string, email: string, passwordHash: string) {
    if (this.holders(email).some((h) => h !== userId)) throw taken();
    this.credentials.set(userId, { userId, email, passwordHash });
  }
}

/** User records in memory; `fail` makes the next write throw (after writing, when `afterWrite`). */
class MemoryUsers implements UserDirectory {
  data = new Map<string, Record<string, unknown>>();
  calls: { op: string; ctx: CallContext }[] = [];
  fail?: { err: AppError; afterWrite?: boolean };
  private written(id: string): CreatedUser {
    return { id, recordJson: JSON.stringify({ id, entityType: 'User', dataJson: JSON.stringify(this.data.get(id)) }) };
  }
  private failure(write: () => void) {
    const f = this.fail;
    this.fail = undefined;
    if (f?.afterWrite) write();
    if (f) throw f.err;
    write();
  }
  async createRecord(create: UserRecordCreate, ctx: CallContext) {
    this.calls.push({ op: 'create', ctx });
    this.failure(() => this.data.set(create.id, create.data));
    return this.written(create.id);
  }
  async updateRecord(patch: UserRecordPatch, ctx: CallContext) {
    this.calls.push({ op: 'update', ctx });
    if (!this.data.has(patch.id)) throw AppError.notFound('User not found');
    this.failure(() => this.data.set(patch.id, { ...this.data.get(patch.id), ...patch.data }));
    return this.written(patch.id);
  }
  async create(): Promise<CreatedUser> {
    throw new Error('registration is not part of these tests');
  }
  async find(id: string): Promise<UserView | null> {
    const d = this.data.get(id);
    return d ? { id, email: String(d.email ?? ''), role: 'Artist', loginEnabled: true } : null;
  }
  async retire() {
    throw new Error('registration is not part of these tests');
  }
}

class Attempts implements LoginFailureStore {
  rows: { id: string; email: string; pending: boolean }[] = [];
  private n = 0;
  async reserve(email: string, _at: Date, _since: Date, max: number): Promise<Reservation> {
    const mine = this.rows.filter((r) => r.email === email);
    if (mine.length >= max) return { granted: false, failures: mine.map(() => Date.now()), pending: 0 };
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

const ADMIN_ID = '0190a0b0-0000-7000-8000-00000000000a';
const ART_ID = '0190a0b0-0000-7000-8000-00000000000b';
const admin: CallContext = { requestId: 't', principal: { userId: ADMIN_ID, role: 'Admin', authKind: 'token' } };
const artist: CallContext = { requestId: 't', principal: { userId: ART_ID, role: 'Artist', authKind: 'token' } };

async function setup() {
  let now = 1_000_000;
  const store = new MemoryAccounts(() => now);
  const users = new MemoryUsers();
  const hasher = new PasswordHasher(1024);
  const attempts = new Attempts();
  const service = new UserAccountService({
    store,
    users,
    hasher,
    throttle: new LoginThrottle(attempts, 10, { pollMs: 1 }),
    logger: createLogger('auth-test', 'silent'),
    now: () => now,
  });
  // An artist with a password and a record.
  users.data.set(ART_ID, { name: 'Art', email: 'art@studio.test', role: 'Artist' });
  store.credentials.set(ART_ID, { userId: ART_ID, email: 'art@studio.test', passwordHash: await hasher.hash('old-password') });
  return { service, store, users, hasher, attempts, advance: (ms: number) => (now += ms) };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as AppError,
  );

describe('creating a User record', () => {
  it('reserves its email as a login without a password, acting as a service for the Admin', async () => {
    const { service, store, users } = await setup();
    const created = await service.createUser({ data: { name: 'New', email: ' New@Studio.TEST ' } }, admin);
    expect(users.data.get(created.id)).toEqual({ name: 'New', email: 'new@studio.test' });
    expect(store.credentials.get(created.id)).toEqual({ userId: created.id, email: 'new@studio.test', passwordHash: null });
    expect(store.claims.size).toBe(0);
    expect(users.calls[0]!.ctx.principal).toEqual({ userId: ADMIN_ID, role: 'Admin', authKind: 'service' });
  });

  it('refuses a taken email before writing anything', async () => {
    const { service, store, users } = await setup();
    const err = await failure(service.createUser({ data: { name: 'Dup', email: 'ART@studio.test' } }, admin));
    expect(err).toMatchObject({ kind: 'conflict', code: 'duplicate_code' });
    expect(users.calls).toEqual([]);
    expect(store.claims.size).toBe(0);
  });

  it('is Admin only and validates the address', async () => {
    const { service, users } = await setup();
    expect(await failure(service.createUser({ data: { email: 'x@studio.test' } }, artist))).toMatchObject({ kind: 'forbidden' });
    const bad = await failure(service.createUser({ data: { email: 'not-an-address' } }, admin));
    expect(bad.kind).toBe('invalid');
    expect(bad.problems).toEqual([expect.objectContaining({ loc: ['data', 'email'], type: 'value_error' })]);
    expect((await failure(service.createUser({ data: { email: 7 } }, admin))).problems?.[0]?.type).toBe('string_type');
    expect(users.calls).toEqual([]);
  });

  it('a User without an email is written without a login', async () => {
    const { service, store } = await setup();
    const created = await service.createUser({ data: { name: 'Freelancer' } }, admin);
    expect(store.credentials.has(created.id)).toBe(false);
  });
});

describe('changing data.email', () => {
  it('moves the login with the record', async () => {
    const { service, store, users } = await setup();
    await service.updateUser({ id: ART_ID, data: { email: 'Moved@studio.test' } }, admin);
    expect(users.data.get(ART_ID)!.email).toBe('moved@studio.test');
    expect(store.credentials.get(ART_ID)!.email).toBe('moved@studio.test');
    expect(store.credentials.get(ART_ID)!.passwordHash).toMatch(/^scrypt\$/);
    expect(store.claims.size).toBe(0);
  });

  it('a taken address is 409 and changes neither record nor credential', async () => {
    const { service, store, users } = await setup();
    store.credentials.set(ADMIN_ID, { userId: ADMIN_ID, email: 'boss@studio.test', passwordHash: null });
    expect(await failure(service.updateUser({ id: ART_ID, data: { email: 'boss@studio.test' } }, admin))).toMatchObject({ code: 'duplicate_code' });
    expect(users.data.get(ART_ID)!.email).toBe('art@studio.test');
    expect(store.credentials.get(ART_ID)!.email).toBe('art@studio.test');
  });

  it('a write records refuses gives the address back', async () => {
    const { service, store, users } = await setup();
    users.fail = { err: AppError.conflict('stale_write', 'the record changed since it was read') };
    expect(await failure(service.updateUser({ id: ART_ID, data: { email: 'new@studio.test' } }, admin))).toMatchObject({ code: 'stale_write' });
    expect(store.claims.size).toBe(0);
    expect(store.credentials.get(ART_ID)!.email).toBe('art@studio.test');
    // Free for anyone again.
    await service.createUser({ data: { email: 'new@studio.test' } }, admin);
  });

  it('a write whose outcome is unknown keeps the claim until the record decides it', async () => {
    const { service, store, users, advance } = await setup();
    users.fail = { err: AppError.unavailable('deadline exceeded'), afterWrite: true };
    await failure(service.updateUser({ id: ART_ID, data: { email: 'late@studio.test' } }, admin));
    expect(store.claims.get(ART_ID)?.email).toBe('late@studio.test');
    // Still reserved: nobody else may take it meanwhile, and this user's next change waits.
    expect(await failure(service.createUser({ data: { email: 'late@studio.test' } }, admin))).toMatchObject({ code: 'duplicate_code' });
    expect(await failure(service.updateUser({ id: ART_ID, data: { email: 'other@studio.test' } }, admin))).toMatchObject({ code: 'email_change_pending' });
    expect(await service.resolveStale()).toBe(0); // too young: its writer may still be at it
    advance(CLAIM_SETTLE_AFTER_MS + 1);
    expect(await service.resolveStale()).toBe(1);
    expect(store.credentials.get(ART_ID)!.email).toBe('late@studio.test'); // the record has it: settled

    users.fail = { err: AppError.unavailable('records is unavailable') }; // this one never wrote
    await failure(service.updateUser({ id: ART_ID, data: { email: 'never@studio.test' } }, admin));
    advance(CLAIM_SETTLE_AFTER_MS + 1);
    expect(await service.resolveStale()).toBe(1);
    expect(store.claims.size).toBe(0);
    expect(store.credentials.get(ART_ID)!.email).toBe('late@studio.test'); // released
  });

  it('cannot remove the address, and is Admin only', async () => {
    const { service } = await setup();
    const err = await failure(service.updateUser({ id: ART_ID, data: { email: null } }, admin));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'email'], type: 'missing' })]);
    expect(await failure(service.updateUser({ id: ART_ID, data: { email: 'me@studio.test' } }, artist))).toMatchObject({ kind: 'forbidden' });
  });

  it('an unknown user is 404 and the address is free again', async () => {
    const { service, store } = await setup();
    expect(await failure(service.updateUser({ id: ADMIN_ID, data: { email: 'ghost@studio.test' } }, admin))).toMatchObject({ kind: 'not_found' });
    expect(store.claims.size).toBe(0);
  });
});

describe('passwords', () => {
  it('the caller changes their own with the right old password', async () => {
    const { service, store, hasher, attempts } = await setup();
    const wrong = await failure(service.changeOwnPassword('not-it', 'brand-new-pw', artist));
    expect(wrong).toMatchObject({ kind: 'forbidden' });
    expect(attempts.rows).toEqual([expect.objectContaining({ email: 'art@studio.test', pending: false })]); // counted as a failed login
    await service.changeOwnPassword('old-password', 'brand-new-pw', artist);
    const hash = store.credentials.get(ART_ID)!.passwordHash!;
    expect(await hasher.verify('brand-new-pw', hash)).toBe(true);
    expect(await hasher.verify('old-password', hash)).toBe(false);
    expect(attempts.rows).toEqual([]);
  });

  it('new passwords follow the rules of registration', async () => {
    const { service } = await setup();
    const err = await failure(service.changeOwnPassword('old-password', 'short', artist));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['new_password'], type: 'string_too_short' })]);
    const set = await failure(service.setPassword(ART_ID, 'short', admin));
    expect(set.problems).toEqual([expect.objectContaining({ loc: ['password'], type: 'string_too_short' })]);
  });

  it('a user without a password cannot change it (no old password matches)', async () => {
    const { service, store } = await setup();
    const created = await service.createUser({ data: { email: 'fresh@studio.test' } }, admin);
    const fresh: CallContext = { requestId: 't', principal: { userId: created.id, role: 'Artist', authKind: 'token' } };
    expect(await failure(service.changeOwnPassword('', 'brand-new-pw', fresh))).toMatchObject({ kind: 'forbidden' });
    expect(store.credentials.get(created.id)!.passwordHash).toBeNull();
  });

  it("an Admin sets anyone's; others may not; unknown users are 404", async () => {
    const { service, store, users, hasher } = await setup();
    const created = await service.createUser({ data: { email: 'fresh@studio.test' } }, admin);
    expect(await failure(service.setPassword(created.id, 'first-password', artist))).toMatchObject({ kind: 'forbidden' });
    expect(await failure(service.setPassword(ADMIN_ID, 'first-password', admin))).toMatchObject({ kind: 'not_found' });
    await service.setPassword(created.id, 'first-password', admin);
    expect(await hasher.verify('first-password', store.credentials.get(created.id)!.passwordHash!)).toBe(true);

    // A User record from before logins followed records gets its credential from its email.
    const legacy = '0190a0b0-0000-7000-8000-00000000000c';
    users.data.set(legacy, { email: 'Legacy@studio.test' });
    await service.setPassword(legacy, 'legacy-password', admin);
    expect(store.credentials.get(legacy)).toMatchObject({ email: 'legacy@studio.test' });
    users.data.set(legacy, { email: 'fresh@studio.test' });
    store.credentials.delete(legacy);
    expect(await failure(service.setPassword(legacy, 'legacy-password', admin))).toMatchObject({ code: 'duplicate_code' });
    users.data.set(legacy, {});
    expect(await failure(service.setPassword(legacy, 'legacy-password', admin))).toMatchObject({ code: 'no_login_email' });
  });
});
