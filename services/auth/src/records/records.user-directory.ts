/**
 * The {@link UserDirectory} backed by the records service over gRPC.
 */
import { AppError, createGrpcClient, ROLES, systemContext, type CallContext, type GrpcClient, type Metrics, type Role } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import type { CreatedUser, NewUser, UserDirectory, UserRecordCreate, UserRecordPatch, UserView } from '../domain/user.directory.js';

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

function written(record: recordsv1.Record | undefined): CreatedUser {
  if (!record) throw new AppError('internal', 'records returned no record');
  return { id: record.id, recordJson: JSON.stringify(recordsv1.Record.toJSON(record)) };
}

export class RecordsUserDirectory implements UserDirectory {
  private readonly client: GrpcClient<recordsv1.RecordsServiceClient>;

  constructor(address: string, internalAuthSecret: string, metrics?: Metrics, deadlineMs = 5000) {
    this.client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address,
      internalAuthSecret,
      deadlineMs,
      metrics,
    });
  }

  async create(user: NewUser, ctx: CallContext): Promise<CreatedUser> {
    const res = await this.client.call.createRecord(
      {
        entityType: USER,
        id: user.id,
        dataJson: JSON.stringify({ name: user.name, email: user.email, role: user.role, login_enabled: true }),
      },
      ctx,
    );
    if (!res.record) throw new AppError('internal', 'records returned no record');
    return { id: res.record.id, recordJson: JSON.stringify(recordsv1.Record.toJSON(res.record)) };
  }

  async createRecord(create: UserRecordCreate, ctx: CallContext): Promise<CreatedUser> {
    const res = await this.client.call.createRecord(
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
    return written(res.record);
  }

  async updateRecord(patch: UserRecordPatch, ctx: CallContext): Promise<CreatedUser> {
    const res = await this.client.call.updateRecord(
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
    return written(res.record);
  }

  async find(id: string): Promise<UserView | null> {
    try {
      const res = await this.client.call.getRecord({ entityType: USER, id }, systemContext());
      return res.record ? toUserView(res.record) : null;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') return null;
      throw err;
    }
  }

  async retire(id: string, ctx: CallContext): Promise<void> {
    await this.client.call.retireRecord({ entityType: USER, id }, ctx);
  }

  close(): void {
    this.client.close();
  }
}
