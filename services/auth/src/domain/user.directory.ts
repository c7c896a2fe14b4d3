/**
 * The User records auth depends on. Users live in the records service; this is the narrow
 * view auth needs of them.
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

export interface UserDirectory {
  /** Creates the User record with the given id, acting as `ctx`'s principal. */
  create(user: NewUser, ctx: CallContext): Promise<CreatedUser>;
  /** The live User, or null when it is missing or retired. */
  find(id: string): Promise<UserView | null>;
  /** Retires the User record (undoes a create whose credential did not commit). */
  retire(id: string, ctx: CallContext): Promise<void>;
}
