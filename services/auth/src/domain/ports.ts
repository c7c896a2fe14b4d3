/**
 * What the auth domain needs from outside, as ports: the User records (the records service,
 * records/), credentials, API keys, session revocations, login failures and signing keys
 * (PostgreSQL, store/), and the announcements of revocations and rotations (NATS, nats/).
 */
import type { CallContext, Role } from '@reelbase/lib-platform';

export interface NewUser {
  id: string;
  name: string;
  email: string;
  role: Role;
}

export interface UserView {
  id: string;
  email: string;
  role: Role;
  /** False when an Admin disabled logins; such a user is refused even with a valid token. */
  loginEnabled: boolean;
}

export interface CreatedUser {
  id: string;
  /** The record exactly as records returned it (records.v1.Record JSON). */
  recordJson: string;
}

/** A User create as the client sent it, with the id auth chose and the data it will store. */
export interface UserRecordCreate {
  id: string;
  projectId?: string;
  status?: string;
  active?: boolean;
  thumbnailId?: string;
  data: Record<string, unknown>;
}

/** A User patch as the client sent it (nullable columns: undefined keeps, null clears). */
export interface UserRecordPatch {
  id: string;
  projectId?: string | null;
  status?: string | null;
  active?: boolean;
  thumbnailId?: string | null;
  data: Record<string, unknown>;
  ifMatch?: string;
}

/** The User records auth depends on: users live in the records service; this is the narrow view auth needs of them. */
export interface UserDirectory {
  /** Writes a User create as given (the caller's principal must be a service to choose the id). */
  createRecord(create: UserRecordCreate, ctx: CallContext): Promise<CreatedUser>;
  /** Writes a User patch as given, acting as `ctx`'s principal. */
  updateRecord(patch: UserRecordPatch, ctx: CallContext): Promise<CreatedUser>;
  /** Creates the User record with the given id, acting as `ctx`'s principal. */
  create(user: NewUser, ctx: CallContext): Promise<CreatedUser>;
  /** The live User, or null when it is missing or retired. */
  find(id: string): Promise<UserView | null>;
  /** Retires the User record (undoes a create whose credential did not commit). */
  retire(id: string, ctx: CallContext): Promise<void>;
}

export interface StoredKey {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt?: Date | null;
  revokedAt?: Date | null;
  expiresAt?: Date | null;
  /** `agent`: the key calls only the farm and sitesync agent routes; null: a normal key. */
  scope?: 'agent' | null;
  /** An agent key's farm pools; null: any pool. */
  pools?: string[] | null;
}

export interface ApiKeyStore {
  /**
   * Stores the key unless its user already holds `maxLive` live keys (not revoked, not expired),
   * counted and written under one lock per user; null when refused.
   */
  insert(
    row: {
      id: string;
      userId: string;
      name: string;
      prefix: string;
      keyHash: string;
      expiresAt: Date | null;
      scope: 'agent' | null;
      pools: string[] | null;
    },
    maxLive: number,
  ): Promise<StoredKey | null>;
  findById(id: string): Promise<StoredKey | null>;
  listActive(userId: string): Promise<StoredKey[]>;
  revoke(id: string): Promise<boolean>;
  /** Revokes every key of `userId` still active; returns their ids. */
  revokeAllOf(userId: string): Promise<string[]>;
}

/** Where "login tokens of this user issued until now are refused" is kept. */
export interface SessionRevocationStore {
  /** Records now (database clock) as the user's revocation time; returns it. */
  revokeBefore(userId: string): Promise<Date>;
}

/** Announces revocations to every gateway. */
export interface RevocationNotifier {
  apiKeyRevoked(event: { api_key_id: string; user_id: string }): Promise<void>;
  /** Every token and key of the user must be checked again. */
  userRevoked(event: { user_id: string }): Promise<void>;
}

/** Finds live users (a retired or unknown one is null). */
export interface UserLookup {
  find(id: string): Promise<unknown>;
}

export interface ApiKeyLookup {
  findByHash(keyHash: string): Promise<{
    id: string;
    userId: string;
    keyHash: string;
    revokedAt?: Date | null;
    expiresAt?: Date | null;
    scope?: 'agent' | null;
    pools?: string[] | null;
  } | null>;
  touch(id: string): Promise<void>;
}

/** When each user's login tokens were last revoked as a whole. */
export interface SessionRevocationLookup {
  revokedBefore(userId: string): Promise<Date | null>;
}

export interface CredentialLookup {
  findByEmail(email: string): Promise<{ userId: string; passwordHash: string | null } | null>;
}

/** The answer of {@link LoginFailureStore.reserve}. */
export type Reservation =
  | { granted: true; id: string }
  /** The window is full: the times of its failures and how many reservations are pending. */
  | { granted: false; failures: number[]; pending: number };

/** Where reservations and failures are kept (shared by every replica). */
export interface LoginFailureStore {
  /**
   * Atomically (per email, across replicas): when fewer than `max` failures and pending
   * reservations of `email` lie after `since`, records a pending reservation at `at`.
   */
  reserve(email: string, at: Date, since: Date, max: number): Promise<Reservation>;
  /** Turns a reservation into a failure. */
  fail(id: string): Promise<void>;
  /** Gives a reservation back (it never counts). */
  release(id: string): Promise<void>;
  /** Removes the failures of `email` (not other attempts' pending reservations). */
  clear(email: string): Promise<void>;
}

/** What a registration may do inside its transaction. */
export interface RegistrationTx {
  anyExists(): Promise<boolean>;
  emailTaken(email: string): Promise<boolean>;
  insert(row: { userId: string; email: string; passwordHash: string }): Promise<void>;
}

/** The credential operations registration needs. */
export interface RegistrationStore {
  anyExists(): Promise<boolean>;
  register<T>(fn: (tx: RegistrationTx) => Promise<T>): Promise<T>;
}

export interface StoredSigningKey {
  kid: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  /** Milliseconds until the key retires, measured on the database's clock; null/absent: not scheduled. */
  retiresInMs?: number | null;
}

/** Persistence of signing keys. */
export interface SigningKeyStore {
  /** Keys not yet retired, newest first. */
  listUsable(): Promise<StoredSigningKey[]>;
  /**
   * Inserts `key` and, atomically, retires every older key `retireAfterMs` from now (database
   * clock; 0: at once), never later than it was already due. Returns how many keys that touched.
   */
  rotate(key: StoredSigningKey, retireAfterMs: number): Promise<number>;
  /** Inserts the generated key only if no usable key exists. */
  ensureOne(generate: () => Promise<StoredSigningKey>): Promise<void>;
}

/** Announces a rotation to the other auth replicas and to every gateway. */
export interface RotationNotifier {
  signingKeysRotated(retiredAtOnce: boolean): Promise<void>;
}

export interface AccountCredential {
  userId: string;
  email: string;
  /** Null until a password is set. */
  passwordHash: string | null;
}

/** Credentials and claims (shared by every replica). */
export interface AccountStore {
  findByUser(userId: string): Promise<AccountCredential | null>;
  /**
   * Reserves `email` for `userId` (committed before it returns). Conflict `duplicate_code` when
   * another user's credential or claim holds it; conflict `email_change_pending` when `userId`
   * already claims another address. Claiming what the user already claims succeeds.
   */
  claim(userId: string, email: string): Promise<void>;
  /** The claimed address becomes the user's login address and the claim goes, at once. */
  settle(userId: string, email: string): Promise<void>;
  /** Drops the claim (no-op when it is gone). */
  release(userId: string, email: string): Promise<void>;
  /** Claims made before `before`. */
  claimsBefore(before: Date): Promise<{ userId: string; email: string }[]>;
  /** Sets the password of an existing credential; false when the user has none. */
  setPasswordHash(userId: string, passwordHash: string): Promise<boolean>;
  /** Creates the credential of a user who has none; conflict `duplicate_code` when the address is taken. */
  insertCredential(userId: string, email: string, passwordHash: string): Promise<void>;
}
