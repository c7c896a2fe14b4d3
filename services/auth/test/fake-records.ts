/**
 * A stand-in for the records PEER service (CreateRecord/GetRecord/... over real gRPC,
 * backed by a map), so auth's integration tests do not depend on records being built.
 * PostgreSQL and NATS stay real.
 */
import { AppError, createLogger, GrpcServer, Metrics, newId, type CallContext } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import { TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';

interface Stored {
  record: recordsv1.Record;
  retired: boolean;
}

export interface FakeRecords {
  port: number;
  records: Map<string, Stored>;
  /** Makes the next CreateRecord fail with `unavailable`. */
  failNextCreate: boolean;
  /** Makes the next UpdateRecord fail with this error (nothing is written). */
  failNextUpdate?: AppError;
  /** The contexts CreateRecord was called with. */
  createCalls: { request: recordsv1.CreateRecordRequest; ctx: CallContext }[];
  setData(id: string, patch: Record<string, unknown>): void;
  retire(id: string): void;
  revive(id: string): void;
  stop(): Promise<void>;
}

export async function startFakeRecords(): Promise<FakeRecords> {
  const records = new Map<string, Stored>();
  const live = (type: string, id: string) => {
    const s = records.get(id);
    if (!s || s.retired || s.record.entityType !== type) throw AppError.notFound(`${type} ${id} not found`);
    return s;
  };
  const server = new GrpcServer({
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    logger: createLogger('fake-records', 'silent'),
    metrics: new Metrics('fake_records'),
  });
  const fake: FakeRecords = {
    port: 0,
    records,
    failNextCreate: false,
    createCalls: [],
    setData(id, patch) {
      const s = records.get(id)!;
      s.record = { ...s.record, dataJson: JSON.stringify({ ...JSON.parse(s.record.dataJson), ...patch }) };
    },
    retire: (id) => void (records.get(id)!.retired = true),
    revive: (id) => void (records.get(id)!.retired = false),
    stop: () => server.close(100),
  };
  server.add<recordsv1.RecordsServiceServer>('reelbase.records.v1.RecordsService', recordsv1.RecordsServiceService, {
    // Batches, summaries and restricted projects are not asked of records by this service.
    listRestrictedProjects: () => Promise.reject(new Error('not used')),
    batchRecords: async () => {
      throw AppError.unavailable('not served by this fake');
    },
    summarizeRecords: async () => {
      throw AppError.unavailable('not served by this fake');
    },
    async createRecord(req, ctx) {
      fake.createCalls.push({ request: req, ctx });
      if (fake.failNextCreate) {
        fake.failNextCreate = false;
        throw AppError.unavailable('records is unavailable');
      }
      // Like the real service: an explicit id only from a service principal.
      if (req.id !== undefined && ctx.principal?.authKind !== 'service') {
        throw new AppError('forbidden', 'only a service may choose a record id');
      }
      const id = req.id ?? newId();
      if (records.has(id)) throw AppError.conflict('duplicate_id', 'id taken');
      const now = new Date().toISOString();
      const record: recordsv1.Record = {
        id,
        entityType: req.entityType,
        active: req.active ?? true,
        createdBy: ctx.principal?.userId || undefined,
        createdAt: now,
        updatedAt: now,
        dataJson: req.dataJson,
      };
      records.set(id, { record, retired: false });
      return { record };
    },
    async getRecord(req) {
      return { record: live(req.entityType, req.id).record };
    },
    async updateRecord(req) {
      const s = live(req.entityType, req.id);
      const refusal = fake.failNextUpdate;
      if (refusal) {
        fake.failNextUpdate = undefined;
        throw refusal;
      }
      if (req.dataJson) fake.setData(req.id, JSON.parse(req.dataJson));
      return { record: s.record };
    },
    async retireRecord(req) {
      const s = live(req.entityType, req.id);
      s.retired = true;
      return { record: s.record };
    },
    async reviveRecord(req) {
      const s = records.get(req.id);
      if (!s) throw AppError.notFound('not found');
      s.retired = false;
      return { record: s.record };
    },
    // The schema's calls; auth never makes them.
    async applySchema() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async applyRename() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async countUsage() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    // Reads of the work views and queries; auth never makes them either.
    async listNotes() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async listUserTasks() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async getTimesheet() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async queryRecords() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    // Share links and guest notes; auth never uses them.
    async createShareLink() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async listShareLinks() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async revokeShareLink() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async openShare() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async createGuestNote() {
      throw new AppError('internal', 'not part of the stand-in');
    },
    async checkShareLink() {
      throw new AppError('internal', 'not part of the stand-in');
    },
  });
  fake.port = await server.listen(0, '127.0.0.1');
  return fake;
}
