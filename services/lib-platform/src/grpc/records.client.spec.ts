/**
 * The shared records client over loopback: a client made with `via` marks every write with it
 * and no read; one without marks nothing; `find` answers null for not_found; the records-only
 * calls (usage, rename) come back as their values.
 */
import { recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../context.js';
import { AppError } from '../errors.js';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { MEDIA_SERVICE } from '../policy/index.js';
import { RecordsClient } from './records.client.js';
import { GrpcServer, type UnaryHandlers } from './server.js';

const SECRET = 'records-client-test-internal-auth-secret-0123456789';
const record = (id: string, entityType = 'Shot'): recordsv1.Record => ({
  id,
  entityType,
  active: true,
  createdAt: '2025-01-01T00:00:00.000000Z',
  updatedAt: '2025-01-01T00:00:00.000000Z',
  dataJson: '{}',
});
const person: CallContext = { requestId: 'r1', principal: { userId: 'u1', role: 'Artist', authKind: 'token' } };

describe('RecordsClient', () => {
  const seen: { method: string; via: string | undefined }[] = [];
  const note = (method: string, ctx: CallContext) => seen.push({ method, via: ctx.principal?.via });
  let server: GrpcServer;
  let address: string;
  const clients: RecordsClient[] = [];
  const client = (opts: { via?: string } = {}) => {
    const c = new RecordsClient({ address, internalAuthSecret: SECRET, ...opts });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = new GrpcServer({ logger: createLogger('test', 'silent'), metrics: new Metrics('records_client_test'), internalAuthSecret: SECRET });
    // The methods these tests call; any other answers an empty message.
    const called: Partial<UnaryHandlers<recordsv1.RecordsServiceServer>> = {
      async createRecord(req, ctx) {
        note('create', ctx);
        return { record: record('new', req.entityType) };
      },
      async getRecord(req, ctx) {
        note('get', ctx);
        if (req.id === 'gone') throw AppError.notFound('no such record');
        return { record: record(req.id, req.entityType) };
      },
      async updateRecord(req, ctx) {
        note('update', ctx);
        return { record: record(req.id, req.entityType) };
      },
      async retireRecord(_req, ctx) {
        note('retire', ctx);
        return {};
      },
      async applySchema(_req, ctx) {
        note('applySchema', ctx);
        return {};
      },
      async applyRename(_req, ctx) {
        note('applyRename', ctx);
        return { rewritten: 7 };
      },
      async countUsage(_req, ctx) {
        note('countUsage', ctx);
        return { usageJson: '{"fields":{"Shot.code":3}}' };
      },
      async queryRecords(_req, ctx) {
        note('query', ctx);
        return { items: [record('a')] };
      },
    };
    const handlers = new Proxy(called, { get: (t, k: string) => t[k as keyof typeof t] ?? (async () => ({})) });
    server.add<recordsv1.RecordsServiceServer>(
      'reelbase.records.v1.RecordsService',
      recordsv1.RecordsServiceService,
      handlers as UnaryHandlers<recordsv1.RecordsServiceServer>,
    );
    address = `127.0.0.1:${await server.listen(0, '127.0.0.1')}`;
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server?.close();
  });

  it('marks every write with its via and no read', async () => {
    const media = client({ via: MEDIA_SERVICE });
    seen.length = 0;
    await media.get('Version', 'v1', person);
    await media.query(recordsv1.QueryRecordsRequest.fromPartial({ entityType: 'Representation' }), person);
    await media.create({ entityType: 'Representation', dataJson: '{}' }, person);
    await media.update({ entityType: 'Representation', id: 'r1', dataJson: '{}' }, person);
    await media.retire('Representation', 'r1', person);
    expect(seen).toEqual([
      { method: 'get', via: undefined },
      { method: 'query', via: undefined },
      { method: 'create', via: MEDIA_SERVICE },
      { method: 'update', via: MEDIA_SERVICE },
      { method: 'retire', via: MEDIA_SERVICE },
    ]);
  });

  it('marks nothing without via', async () => {
    const plain = client();
    seen.length = 0;
    await plain.create({ entityType: 'User', dataJson: '{}' }, person);
    await plain.update({ entityType: 'User', id: 'u1', dataJson: '{}' }, person);
    expect(seen.map((s) => s.via)).toEqual([undefined, undefined]);
  });

  it('answers the record, null from find for not_found, and not_found from get', async () => {
    const plain = client();
    expect((await plain.get('Project', 'p1', person)).id).toBe('p1');
    expect((await plain.find('Project', 'p1', person))?.entityType).toBe('Project');
    expect(await plain.find('Project', 'gone', person)).toBeNull();
    await expect(plain.get('Project', 'gone', person)).rejects.toMatchObject({ kind: 'not_found' });
    expect((await plain.create({ entityType: 'User', dataJson: '{}' }, person)).entityType).toBe('User');
  });

  it('answers usage as its JSON text and a rename as the records it rewrote', async () => {
    const plain = client();
    expect(await plain.countUsage(person)).toBe('{"fields":{"Shot.code":3}}');
    expect(await plain.applyRename({ journalId: 'j', kind: 'field', entityType: 'Shot', field: 'code', from: 'a', to: 'b' }, person)).toBe(7);
  });
});
