/**
 * The gRPC server and client wrappers together, over loopback: responses, errors (every kind
 * keeps its code, problems, extra fields and message), the call context in metadata,
 * deadlines, an unreachable peer, server metrics and grpc.health.v1.
 */
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { healthv1, recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toMetadata, type CallContext } from '../context.js';
import { AppError, type ErrorKind } from '../errors.js';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { createGrpcClient, type GrpcClient } from './client.js';
import { INTERNAL_AUTH_KEY, InternalAuth } from './internal.auth.js';
import { GrpcServer } from './server.js';

const SERVICE = 'reelbase.records.v1.RecordsService';
/** Handlers for the records methods these tests never call, so a server can register the whole service. */
const UNUSED_RECORDS_METHODS = {
  applySchema: async () => ({}),
  applyRename: async () => ({ rewritten: 0 }),
  countUsage: async () => ({ usageJson: '{}' }),
  listNotes: async () => ({ notes: [] }),
  listUserTasks: async () => ({ tasks: [] }),
  getTimesheet: async () => ({ timeLogs: [], totalMinutes: 0 }),
  queryRecords: async () => ({ items: [] }),
  createShareLink: async () => ({ token: '' }),
  listShareLinks: async () => ({ links: [] }),
  revokeShareLink: async () => ({}),
  openShare: async () => ({ linkId: '', hasPassword: false, playlistId: '', playlistName: '', versions: [], canComment: false }),
  createGuestNote: async () => ({}),
  checkShareLink: async () => ({ playlistId: '' }),
};
const SECRET = 'round-trip-test-internal-auth-secret-0123456789';
const { HealthCheckResponse_ServingStatus: Serving } = healthv1;

const record = (id: string): recordsv1.Record => ({
  id,
  entityType: 'Shot',
  active: true,
  createdAt: '2025-01-01T00:00:00.000000Z',
  updatedAt: '2025-01-01T00:00:00.000000Z',
  dataJson: '{"code":"SH010"}',
});

/** The errors the `getRecord` handler throws, chosen by the requested id. */
const ERRORS: Record<string, () => Error> = {
  invalid: () =>
    AppError.invalid([
      { loc: ['body', 'code'], msg: 'field required', type: 'missing' },
      { loc: ['body', 'tags', 2], msg: 'not a string', type: 'string_type' },
    ]),
  bad_request: () => new AppError('bad_request', 'malformed cursor'),
  conflict: () => AppError.conflict('stale_write', 'the record changed since it was read', { usage: 3 }),
  not_found: () => AppError.notFound("Shot 'Zoë' does not exist"),
  forbidden: () => new AppError('forbidden', 'Viewers cannot write'),
  unauthenticated: () => new AppError('unauthenticated', 'token expired', { code: 'token_expired' }),
  rate_limited: () => new AppError('rate_limited', 'slow down', { retryAfter: 7 }),
  too_large: () => new AppError('too_large', 'body over 1 MB'),
  unavailable: () => AppError.unavailable('database is unavailable'),
  plain: () => new Error('secret connection string postgres://u:hunter2@db'),
  // 40,000 unknown keys, capped where made (1,000 broke the stream before).
  huge_list: () =>
    AppError.invalid(Array.from({ length: 40_000 }, (_, i) => ({ loc: ['data', `k${i}`], msg: `Shot has no field 'k${i}'`, type: 'extra_forbidden' }))),
  // One key of 100,000 characters, echoed twice (40,000 broke the stream before).
  huge_key: () => AppError.invalid([{ loc: ['data', 'k'.repeat(100_000)], msg: `Shot has no field '${'k'.repeat(100_000)}'`, type: 'extra_forbidden' }]),
  // Made without the cap (as a hand-built AppError could be): only the transport's budget stands.
  huge_raw: () =>
    new AppError('invalid', 'request validation failed', {
      problems: Array.from({ length: 3000 }, (_, i) => ({ loc: ['body', i], msg: 'é'.repeat(300), type: 'value_error' })),
    }),
  huge_extra: () => AppError.conflict('code_in_use', 'in use', { usage: 'x'.repeat(200_000) }),
  huge_message: () => AppError.notFound(`Shot ${'ß'.repeat(100_000)} does not exist`),
};

const WIRE_STATUS: Partial<Record<ErrorKind, status>> = {
  invalid: status.INVALID_ARGUMENT,
  bad_request: status.INVALID_ARGUMENT,
  conflict: status.FAILED_PRECONDITION,
  not_found: status.NOT_FOUND,
  forbidden: status.PERMISSION_DENIED,
  unauthenticated: status.UNAUTHENTICATED,
  rate_limited: status.RESOURCE_EXHAUSTED,
  too_large: status.RESOURCE_EXHAUSTED,
  unavailable: status.UNAVAILABLE,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected the call to fail');
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('GrpcServer + createGrpcClient over loopback', () => {
  const logLines: Record<string, unknown>[] = [];
  const logger = createLogger(
    'grpc-test',
    'info',
    new Writable({
      write(chunk, _enc, cb) {
        logLines.push(JSON.parse(String(chunk)));
        cb();
      },
    }),
  );
  const metrics = new Metrics('grpc-test');
  const seen: CallContext[] = [];
  let server: GrpcServer;
  let port: number;
  let client: GrpcClient<recordsv1.RecordsServiceClient>;

  beforeAll(async () => {
    server = new GrpcServer({ logger, metrics, internalAuthSecret: SECRET });
    server.add<recordsv1.RecordsServiceServer>(SERVICE, recordsv1.RecordsServiceService, {
      batchRecords: async () => ({ json: '' }),
      summarizeRecords: async () => ({ json: '' }),
      listRestrictedProjects: async () => ({ projects: [] }),
      async createRecord(req, ctx) {
        seen.push(ctx);
        return { record: { ...record(req.id ?? 'new'), entityType: req.entityType, dataJson: req.dataJson } };
      },
      async getRecord(req) {
        const make = ERRORS[req.id];
        if (make) throw make();
        if (req.id === 'slow') await sleep(1500);
        return { record: record(req.id) };
      },
      async updateRecord() {
        return {};
      },
      async retireRecord() {
        return {};
      },
      async reviveRecord() {
        return {};
      },
      ...UNUSED_RECORDS_METHODS,
    });
    port = await server.listen(0, '127.0.0.1');
    client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: `127.0.0.1:${port}`,
      internalAuthSecret: SECRET,
      metrics,
    });
  });

  afterAll(async () => {
    client?.close();
    await server?.close(500);
  });

  const ctx: CallContext = { requestId: 'req-1' };

  it('returns the handler response', async () => {
    const res = await client.call.createRecord({ entityType: 'Shot', dataJson: '{"a":1}', id: 'r1' }, ctx);
    expect(res.record).toMatchObject({ id: 'r1', entityType: 'Shot', dataJson: '{"a":1}', active: true });
  });

  it.each(Object.keys(WIRE_STATUS) as ErrorKind[])('brings a %s AppError back intact', async (kind) => {
    const thrown = ERRORS[kind]!() as AppError;
    const err = await rejection(client.call.getRecord({ entityType: 'Shot', id: kind }, ctx));
    expect(err.kind).toBe(kind);
    expect(err.code).toBe(thrown.code);
    expect(err.message).toBe(thrown.message);
    expect(err.problems).toEqual(thrown.problems);
    expect(err.extra).toEqual(thrown.extra);
    expect(err.retryAfter).toBe(thrown.retryAfter);
    // The kind decides the status on the wire, not only the metadata.
    expect((err.cause as ServiceError).code).toBe(WIRE_STATUS[kind]);
  });

  it('keeps the details that matter to callers of the common kinds', async () => {
    const invalid = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'invalid' }, ctx));
    expect(invalid.code).toBe('validation_error');
    expect(invalid.problems).toEqual([
      { loc: ['body', 'code'], msg: 'field required', type: 'missing' },
      { loc: ['body', 'tags', 2], msg: 'not a string', type: 'string_type' },
    ]);
    const conflict = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'conflict' }, ctx));
    expect(conflict).toMatchObject({ kind: 'conflict', code: 'stale_write', extra: { usage: 3 } });
    const limited = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'rate_limited' }, ctx));
    expect(limited).toMatchObject({ kind: 'rate_limited', code: 'rate_limited', retryAfter: 7 });
    const missing = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'not_found' }, ctx));
    expect(missing.message).toBe("Shot 'Zoë' does not exist");
  });

  it('brings an error of any size back whole or as a smaller error of the same kind, never a broken stream', async () => {
    const list = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'huge_list' }, ctx));
    expect(list.kind).toBe('invalid');
    expect(list.problems).toHaveLength(101);
    expect(list.problems[99]).toEqual({ loc: ['data', 'k99'], msg: "Shot has no field 'k99'", type: 'extra_forbidden' });
    expect(list.problems[100]).toEqual({ loc: [], msg: '39900 more problems not listed (at most 100 are)', type: 'too_many_errors' });

    const key = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'huge_key' }, ctx));
    expect(key.kind).toBe('invalid');
    // `loc` parts keep 200 characters, a `msg` 400 (services clip what they echo in it to 200 as well).
    expect(key.problems).toEqual([{ loc: ['data', `${'k'.repeat(200)}…`], msg: `Shot has no field '${'k'.repeat(381)}…`, type: 'extra_forbidden' }]);

    const raw = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'huge_raw' }, ctx));
    expect(raw.kind).toBe('invalid');
    const counted = raw.problems[raw.problems.length - 1]!;
    expect(counted.type).toBe('too_many_errors');
    const kept = raw.problems.length - 1;
    expect(kept).toBeGreaterThan(10);
    expect(counted.msg).toBe(`${3000 - kept} more problems not listed (at most ${kept} are)`);
    expect(counted.loc).toEqual(['body']);
    expect(raw.problems.slice(0, kept)).toEqual(Array.from({ length: kept }, (_, i) => ({ loc: ['body', i], msg: 'é'.repeat(300), type: 'value_error' })));

    const extra = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'huge_extra' }, ctx));
    expect(extra).toMatchObject({ kind: 'conflict', code: 'code_in_use', message: 'in use', extra: {} });

    const message = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'huge_message' }, ctx));
    expect(message.kind).toBe('not_found');
    expect(message.message).toBe(`Shot ${'ß'.repeat(995)}…`);
  });

  it('answers a plain Error as internal without leaking its message, and logs it', async () => {
    const err = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'plain' }, { requestId: 'req-plain' }));
    expect(err.kind).toBe('internal');
    expect(err.code).toBe('internal');
    expect(err.message).toBe('internal error');
    expect(err.message).not.toContain('hunter2');
    expect((err.cause as ServiceError).code).toBe(status.INTERNAL);
    const line = logLines.find((l) => l.msg === 'rpc failed' && l.request_id === 'req-plain');
    expect(line).toBeDefined();
    expect(line!.rpc).toBe(`${SERVICE}/getRecord`);
  });

  it('does not log expected client errors as failures', async () => {
    await rejection(client.call.getRecord({ entityType: 'Shot', id: 'not_found' }, { requestId: 'req-nf' }));
    expect(logLines.filter((l) => l.request_id === 'req-nf' && l.level === 'error')).toEqual([]);
  });

  it('hands the handler the caller context intact', async () => {
    const full: CallContext = {
      requestId: '01234567-89ab-7def-8123-456789abcdef',
      principal: { userId: 'u-42', role: 'Guest', authKind: 'guest', apiKeyId: 'k-7', guestName: 'Zoë Müller (VFX, 100%)' },
    };
    seen.length = 0;
    await client.call.createRecord({ entityType: 'Note', dataJson: '{}' }, full);
    await client.call.createRecord({ entityType: 'Note', dataJson: '{}' }, { requestId: 'anon' });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toEqual(full);
    expect(seen[0]!.principal!.guestName).toBe('Zoë Müller (VFX, 100%)');
    expect(seen[1]).toEqual({ requestId: 'anon' });
    expect(seen[1]!.principal).toBeUndefined();
  });

  describe('internal calls prove who sends them', () => {
    const admin: CallContext = { requestId: 'req-forged', principal: { userId: 'u-1', role: 'Admin', authKind: 'token' } };
    const path = `/${SERVICE}/CreateRecord`;
    const NOTE: recordsv1.CreateRecordRequest = { entityType: 'Note', dataJson: '{}' };
    const bytesOf = (req: recordsv1.CreateRecordRequest) => recordsv1.CreateRecordRequest.encode(req).finish();
    /** Calls createRecord with exactly `md` (and `req`), bypassing the signing client. */
    const rawCall = (md: Metadata, req: recordsv1.CreateRecordRequest = NOTE) =>
      new Promise<ServiceError | null>((resolve) => client.raw.createRecord(req, md, {}, (err) => resolve(err)));

    it('refuses a principal without an assertion, with a wrong key, altered or expired, before the handler runs', async () => {
      seen.length = 0;
      const unsigned = toMetadata(admin);
      const otherKey = toMetadata(admin);
      new InternalAuth('another-deployment-secret-0123456789abcdef').sign(otherKey, path, bytesOf(NOTE));
      const altered = toMetadata({ ...admin, principal: { ...admin.principal!, role: 'Viewer' } });
      new InternalAuth(SECRET).sign(altered, path, bytesOf(NOTE));
      altered.set('x-principal-role', 'Admin');
      const otherMethod = toMetadata(admin);
      new InternalAuth(SECRET).sign(otherMethod, `/${SERVICE}/RetireRecord`, bytesOf(NOTE));
      const expired = toMetadata(admin);
      new InternalAuth(SECRET, () => Date.now() - 61_000).sign(expired, path, bytesOf(NOTE));
      const garbage = toMetadata(admin);
      garbage.set(INTERNAL_AUTH_KEY, 'v2.9999999999999.n.AAAA');
      for (const [md, reason] of [
        [unsigned, 'missing'],
        [otherKey, 'bad signature'],
        [altered, 'bad signature'],
        [otherMethod, 'bad signature'],
        [expired, 'expired'],
        [garbage, 'expired'],
      ] as const) {
        const err = await rawCall(md);
        expect(err?.code, reason).toBe(status.UNAUTHENTICATED);
        expect(err?.details).toBe(`internal call refused: ${reason} ${INTERNAL_AUTH_KEY} assertion`);
      }
      expect(seen).toEqual([]);
      expect(logLines.some((l) => l.msg === 'rpc refused: no valid internal assertion' && l.reason === 'missing')).toBe(true);
    });

    it('refuses a call without any context too, and takes a correctly signed one', async () => {
      expect((await rawCall(new Metadata()))?.code).toBe(status.UNAUTHENTICATED);
      seen.length = 0;
      const signed = toMetadata(admin);
      new InternalAuth(SECRET).sign(signed, path, bytesOf(NOTE));
      expect(await rawCall(signed)).toBeNull();
      expect(seen).toEqual([admin]);
    });

    it('refuses a captured call replayed with another body, or replayed as it was; a fresh call is taken', async () => {
      seen.length = 0;
      const asked: recordsv1.CreateRecordRequest = { entityType: 'Note', dataJson: '{"text":"fine"}' };
      const md = toMetadata(admin);
      new InternalAuth(SECRET).sign(md, path, bytesOf(asked));
      // Another body under the captured assertion (before the original is even sent).
      const swapped = await rawCall(md, { entityType: 'Project', dataJson: '{"name":"Mine"}' });
      expect([swapped?.code, swapped?.details]).toEqual([status.UNAUTHENTICATED, `internal call refused: bad signature ${INTERNAL_AUTH_KEY} assertion`]);
      expect(await rawCall(md, asked)).toBeNull();
      // The very same call again.
      const replayed = await rawCall(md, asked);
      expect([replayed?.code, replayed?.details]).toEqual([status.UNAUTHENTICATED, `internal call refused: replayed ${INTERNAL_AUTH_KEY} assertion`]);
      expect(seen).toEqual([admin]);
      expect(logLines.some((l) => l.msg === 'rpc refused: no valid internal assertion' && l.reason === 'replayed')).toBe(true);
      // Counted by reason for the ReelbaseInternalAuthFailures alert.
      const refusals = Object.fromEntries((await metrics.internalAuthFailures.get()).values.map((v) => [v.labels.reason, v.value]));
      expect(refusals['bad signature']).toBeGreaterThanOrEqual(1);
      expect(refusals.replayed).toBeGreaterThanOrEqual(1);
      // The client signs every call afresh: the same request twice is two calls.
      await client.call.createRecord(asked, admin);
      await client.call.createRecord(asked, admin);
      expect(seen).toHaveLength(3);
    });

    it('answers a client signing with another key with unavailable (a deployment fault), never unauthenticated', async () => {
      const stranger = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
        name: 'records',
        address: `127.0.0.1:${port}`,
        internalAuthSecret: 'another-deployment-secret-0123456789abcdef',
      });
      try {
        const err = await rejection(stranger.call.getRecord({ entityType: 'Shot', id: 'ok' }, admin));
        expect(err.kind).toBe('unavailable');
        expect(err.message).toBe(
          'records refused the call (internal call refused: bad signature x-internal-auth assertion); is INTERNAL_AUTH_SECRET the same in every service?',
        );
        expect((err.cause as ServiceError).code).toBe(status.UNAUTHENTICATED);
      } finally {
        stranger.close();
      }
    });

    it('refuses to start with a secret shorter than 32 bytes', () => {
      expect(() => new GrpcServer({ logger, metrics, internalAuthSecret: 'short' })).toThrow(/at least 32 bytes/);
      expect(() =>
        createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
          name: 'r',
          address: '127.0.0.1:1',
          internalAuthSecret: 'x'.repeat(31),
        }),
      ).toThrow(/at least 32 bytes/);
    });
  });

  it('fails a call slower than its deadline with unavailable, promptly', async () => {
    const started = Date.now();
    const err = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'slow' }, ctx, { deadlineMs: 150 }));
    const elapsed = Date.now() - started;
    expect(err.kind).toBe('unavailable');
    expect((err.cause as ServiceError).code).toBe(status.DEADLINE_EXCEEDED);
    expect(err.message).toContain('records');
    expect(elapsed).toBeLessThan(1000);
  });

  it('fails fast with unavailable when nothing listens at the address', async () => {
    const dead = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: `127.0.0.1:${await closedPort()}`,
      internalAuthSecret: SECRET,
      deadlineMs: 10_000,
    });
    try {
      const started = Date.now();
      const err = await rejection(dead.call.getRecord({ entityType: 'Shot', id: 'x' }, ctx));
      expect(err.kind).toBe('unavailable');
      expect(err.message).toContain('records is unavailable');
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      dead.close();
    }
  });

  it('counts handled calls by method and status code', async () => {
    await client.call.getRecord({ entityType: 'Shot', id: 'ok-1' }, ctx);
    await rejection(client.call.getRecord({ entityType: 'Shot', id: 'forbidden' }, ctx));
    const { values } = await metrics.registry.getSingleMetric('grpc_server_handled_total')!.get();
    const count = (method: string, code: string) => values.find((v) => v.labels.method === `${SERVICE}/${method}` && v.labels.code === code)?.value ?? 0;
    expect(count('getRecord', 'OK')).toBeGreaterThanOrEqual(1);
    expect(count('getRecord', 'PERMISSION_DENIED')).toBeGreaterThanOrEqual(1);
    expect(count('getRecord', 'INTERNAL')).toBeGreaterThanOrEqual(1);
    expect(count('createRecord', 'OK')).toBeGreaterThanOrEqual(1);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /grpc_server_handled_total\{[^}]*method="reelbase\.records\.v1\.RecordsService\/getRecord"[^}]*code="OK"[^}]*service="grpc-test"[^}]*\} \d+/,
    );
    expect(text).toMatch(/grpc_client_handling_seconds_count\{[^}]*method="records\/getRecord"[^}]*code="PERMISSION_DENIED"/);
  });

  it('refuses to register a service with a unary method left unhandled', () => {
    const other = new GrpcServer({ logger, metrics: new Metrics('other'), internalAuthSecret: SECRET });
    expect(() =>
      other.add<recordsv1.RecordsServiceServer>(SERVICE, recordsv1.RecordsServiceService, {
        createRecord: async () => ({}),
        batchRecords: async () => ({ json: '' }),
        summarizeRecords: async () => ({ json: '' }),
        getRecord: async () => ({}),
      } as never),
    ).toThrow(/no handler for updateRecord/);
    other.server.forceShutdown();
  });

  describe('grpc.health.v1', () => {
    let health: GrpcClient<healthv1.HealthClient>;
    beforeAll(() => {
      health = createGrpcClient(healthv1.HealthClient, healthv1.HealthService, { name: 'health', address: `127.0.0.1:${port}`, internalAuthSecret: SECRET });
    });
    afterAll(() => health.close());

    it('answers SERVING for the server and the registered service, NOT_FOUND for others', async () => {
      expect((await health.call.check({ service: '' }, ctx)).status).toBe(Serving.SERVING);
      expect((await health.call.check({ service: SERVICE }, ctx)).status).toBe(Serving.SERVING);
      const err = await rejection(health.call.check({ service: 'reelbase.nope.v1.Nope' }, ctx));
      expect(err.kind).toBe('not_found');
      expect((err.cause as ServiceError).code).toBe(status.NOT_FOUND);
    });

    it('streams status changes to watchers', async () => {
      const raw = new healthv1.HealthClient(`127.0.0.1:${port}`, credentials.createInsecure());
      const statuses: healthv1.HealthCheckResponse_ServingStatus[] = [];
      const stream = raw.watch({ service: 'reelbase.watched.v1.W' });
      stream.on('error', () => {});
      stream.on('data', (m: healthv1.HealthCheckResponse) => statuses.push(m.status));
      await expect.poll(() => statuses).toEqual([Serving.SERVICE_UNKNOWN]);
      server.health.set('reelbase.watched.v1.W', true);
      await expect.poll(() => statuses).toEqual([Serving.SERVICE_UNKNOWN, Serving.SERVING]);
      server.health.set('reelbase.watched.v1.W', false);
      await expect.poll(() => statuses).toEqual([Serving.SERVICE_UNKNOWN, Serving.SERVING, Serving.NOT_SERVING]);
      stream.cancel();
      raw.close();
    });

    it('answers NOT_SERVING everywhere once the server starts stopping', async () => {
      server.health.stopAll();
      expect((await health.call.check({ service: '' }, ctx)).status).toBe(Serving.NOT_SERVING);
      expect((await health.call.check({ service: SERVICE }, ctx)).status).toBe(Serving.NOT_SERVING);
      server.health.set('', true);
      server.health.set(SERVICE, true);
    });
  });
});

describe('GrpcServer.close', () => {
  it('marks every service not serving, then stops', async () => {
    const metrics = new Metrics('close-test');
    const server = new GrpcServer({ logger: createLogger('close-test', 'silent'), metrics, internalAuthSecret: SECRET });
    server.add<recordsv1.RecordsServiceServer>(SERVICE, recordsv1.RecordsServiceService, {
      createRecord: async () => ({}),
      batchRecords: async () => ({ json: '' }),
      summarizeRecords: async () => ({ json: '' }),
      listRestrictedProjects: async () => ({ projects: [] }),
      getRecord: async () => ({}),
      updateRecord: async () => ({}),
      retireRecord: async () => ({}),
      reviveRecord: async () => ({}),
      ...UNUSED_RECORDS_METHODS,
    });
    const port = await server.listen(0, '127.0.0.1');
    const client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: `127.0.0.1:${port}`,
      internalAuthSecret: SECRET,
    });
    await client.call.getRecord({ entityType: 'Shot', id: 'a' }, { requestId: 'r' });
    await server.close(500);
    const check = (service: string) =>
      new Promise<unknown>((resolve) => server.health.implementation.check({ request: { service } } as never, (err, res) => resolve(err ?? res?.status)));
    expect(await check('')).toBe(Serving.NOT_SERVING);
    expect(await check(SERVICE)).toBe(Serving.NOT_SERVING);
    const err = await rejection(client.call.getRecord({ entityType: 'Shot', id: 'a' }, { requestId: 'r' }, { deadlineMs: 2000 }));
    expect(err.kind).toBe('unavailable');
    client.close();
  });
});
