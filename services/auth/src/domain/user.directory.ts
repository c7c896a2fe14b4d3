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
