/**
 * The {@link UserDirectory} backed by the records service (lib-platform's {@link RecordsClient}).
 */
import { ROLES, systemContext, type CallContext, type RecordsClient, type Role } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import type { CreatedUser, NewUser, UserDirectory, UserRecordCreate, UserRecordPatch, UserView } from '../domain/ports.js';

const USER = 'User';

/** Reads a User record's data; an unknown or missing role reads as the least privileged. */
export function toUserView(record: recordsv1.Record): UserView {
  let data: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(record.dataJson || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
  } catch {
    // A record we cannot read grants nothing beyond the defaults below.
  }
  const role = ROLES.includes(data.role as Role) ? (data.role as Role) : 'Viewer';
  return {
    id: record.id,
    email: typeof data.email === 'string' ? data.email : '',
    role,
    loginEnabled: data.login_enabled !== false,
  };
}

/** Absent → unchanged; null → cleared; a value → set. */
const nullable = (v: string | null | undefined): recordsv1.NullableString | undefined => (v === undefined ? undefined : v === null ? {} : { value: v });

const created = (record: recordsv1.Record): CreatedUser => ({ id: record.id, recordJson: JSON.stringify(recordsv1.Record.toJSON(record)) });

export class RecordsUserDirectory implements UserDirectory {
  constructor(private readonly records: RecordsClient) {}

  create(user: NewUser, ctx: CallContext): Promise<CreatedUser> {
    return this.createRecord({ id: user.id, data: { name: user.name, email: user.email, role: user.role, login_enabled: true } }, ctx);
  }

  async createRecord(create: UserRecordCreate, ctx: CallContext): Promise<CreatedUser> {
    const record = await this.records.create(
      {
        entityType: USER,
        id: create.id,
        projectId: create.projectId,
        status: create.status,
        active: create.active,
        thumbnailId: create.thumbnailId,
        dataJson: JSON.stringify(create.data),
      },
      ctx,
    );
    return created(record);
  }

  async updateRecord(patch: UserRecordPatch, ctx: CallContext): Promise<CreatedUser> {
    const record = await this.records.update(
      {
        entityType: USER,
        id: patch.id,
        projectId: nullable(patch.projectId),
        status: nullable(patch.status),
        active: patch.active,
        thumbnailId: nullable(patch.thumbnailId),
        dataJson: JSON.stringify(patch.data),
        ifMatch: patch.ifMatch,
      },
      ctx,
    );
    return created(record);
  }

  async find(id: string): Promise<UserView | null> {
    const record = await this.records.find(USER, id, systemContext());
    return record ? toUserView(record) : null;
  }

  async retire(id: string, ctx: CallContext): Promise<void> {
    await this.records.retire(USER, id, ctx);
  }
}
