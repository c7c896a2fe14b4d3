/**
 * A stand-in for the records peer (GetRecord / CreateRecord / UpdateRecord over real gRPC, backed
 * by a map), so the media tests do not need records, schema and their database. Every update is
 * kept in order, so a test can see each state change (each one would be an event).
 */
import { AppError, createLogger, fieldWriteRefusal, GrpcServer, Metrics, newId, type CallContext } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import { TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';

export interface RecordUpdate {
  entityType: string;
  id: string;
  data: Record<string, unknown>;
  thumbnailId?: string;
  ctx: CallContext;
}

export interface FakeRecords {
  port: number;
  records: Map<string, recordsv1.Record>;
  updates: RecordUpdate[];
  creates: { request: recordsv1.CreateRecordRequest; ctx: CallContext }[];
  /** Stores a record as if it had been created (by a process that stopped right after). */
  put(record: recordsv1.Record): void;
  /** While set, GetRecord answers only once it resolves (a records that is slow to read). */
  readGate?: Promise<void>;
  /** While set, an UpdateRecord whose patch it returns true for is answered `unavailable` (records down for it). */
  refuseUpdate?: (patch: Record<string, unknown>) => boolean;
  /** Adds a Version of a project; returns its id. */
  addVersion(projectId?: string): string;
  data(id: string): Record<string, unknown>;
  stop(): Promise<void>;
}

/** As records does: the transcode fields are written only through the media service (403 otherwise). */
function checkFields(entityType: string, dataJson: string | undefined, ctx: CallContext): void {
  const data = dataJson ? (JSON.parse(dataJson) as Record<string, unknown>) : {};
  const why = ctx.principal ? fieldWriteRefusal(ctx.principal, entityType, data) : 'writes need an acting principal';
  if (why) throw new AppError('forbidden', why);
}

const unused = async () => {
  throw new AppError('internal', 'not part of the stand-in');
};

export async function startFakeRecords(): Promise<FakeRecords> {
  const records = new Map<string, recordsv1.Record>();
  const server = new GrpcServer({
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    logger: createLogger('fake-records', 'silent'),
    metrics: new Metrics('fake_records'),
  });
  const get = (type: string, id: string) => {
    const r = records.get(id);
    if (!r || r.entityType !== type) throw AppError.notFound(`${type} ${id} not found`);
    return r;
  };
  const stamp = () => new Date().toISOString().replace('Z', '000Z');
  const fake: FakeRecords = {
    port: 0,
    records,
    updates: [],
    creates: [],
    addVersion(projectId = newId()) {
      const id = newId();
      records.set(id, {
        id,
        entityType: 'Version',
        projectId,
        active: true,
        createdAt: stamp(),
        updatedAt: stamp(),
        dataJson: JSON.stringify({ code: `v${records.size}` }),
      });
      return id;
    },
    put: (record) => void records.set(record.id, record),
    data: (id) => JSON.parse(records.get(id)?.dataJson ?? '{}') as Record<string, unknown>,
    stop: () => server.close(100),
  };
  server.add<recordsv1.RecordsServiceServer>('reelbase.records.v1.RecordsService', recordsv1.RecordsServiceService, {
    // Batches, summaries and restricted projects are not asked of records by this service.
    listRestrictedProjects: () => Promise.reject(AppError.unavailable('not served by this fake')),
    batchRecords: async () => {
      throw AppError.unavailable('not served by this fake');
    },
    summarizeRecords: async () => {
      throw AppError.unavailable('not served by this fake');
    },
    async createRecord(req, ctx) {
      fake.creates.push({ request: req, ctx });
      if (req.id !== undefined && ctx.principal?.authKind !== 'service') throw new AppError('forbidden', 'only a service may choose a record id');
      checkFields(req.entityType, req.dataJson, ctx);
      if (req.entityType === 'Representation' && !req.projectId)
        throw AppError.invalid([{ loc: ['body', 'project_id'], msg: 'Field required', type: 'missing' }]);
      const id = req.id ?? newId();
      const record: recordsv1.Record = {
        id,
        entityType: req.entityType,
        projectId: req.projectId,
        active: true,
        createdBy: ctx.principal?.userId || undefined,
        createdAt: stamp(),
        updatedAt: stamp(),
        dataJson: req.dataJson,
      };
      records.set(id, record);
      return { record };
    },
    async getRecord(req) {
      if (fake.readGate) await fake.readGate;
      return { record: get(req.entityType, req.id) };
    },
    async updateRecord(req, ctx) {
      const r = get(req.entityType, req.id);
      checkFields(req.entityType, req.dataJson, ctx);
      const patch = req.dataJson ? (JSON.parse(req.dataJson) as Record<string, unknown>) : {};
      if (fake.refuseUpdate?.(patch)) throw AppError.unavailable('records is unavailable (the test refused this update)');
      const merged = { ...(JSON.parse(r.dataJson) as Record<string, unknown>) };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      const next = { ...r, dataJson: JSON.stringify(merged), updatedAt: stamp(), thumbnailId: req.thumbnailId ? req.thumbnailId.value : r.thumbnailId };
      records.set(r.id, next);
      fake.updates.push({ entityType: req.entityType, id: req.id, data: patch, thumbnailId: req.thumbnailId?.value, ctx });
      return { record: next };
    },
    retireRecord: unused,
    reviveRecord: unused,
    applySchema: unused,
    applyRename: unused,
    countUsage: unused,
    listNotes: unused,
    listUserTasks: unused,
    getTimesheet: unused,
    createShareLink: unused,
    listShareLinks: unused,
    revokeShareLink: unused,
    openShare: unused,
    createGuestNote: unused,
    checkShareLink: unused,
    // Only the query media-transcode makes: the Representations of one Version (newest first).
    async queryRecords(req) {
      const filters = JSON.parse(req.filtersJson ?? '[]') as [string, string, { type: string; id: string }][];
      const [field, op, value] = filters[0] ?? [];
      if (req.entityType !== 'Representation' || filters.length !== 1 || field !== 'version' || op !== 'is')
        throw new AppError('internal', 'not part of the stand-in');
      const items = [...records.values()]
        .filter((r) => r.entityType === 'Representation' && (JSON.parse(r.dataJson) as { version?: { id?: string } }).version?.id === value!.id)
        .reverse();
      return { items };
    },
  });
  fake.port = await server.listen(0, '127.0.0.1');
  return fake;
}
