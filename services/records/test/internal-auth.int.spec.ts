/**
 * The records service accepts a caller's principal only with a valid internal assertion
 * (docs/architecture.md, "Internal calls"): a call claiming to be an Admin without one, or
 * signed with another key, is refused with UNAUTHENTICATED and writes nothing; the same call
 * signed with the deployment's secret goes through.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { InternalAuth, newId, toMetadata, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { recordsv1 } from '@reelbase/proto';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';

const CREATE = '/reelbase.records.v1.RecordsService/CreateRecord';
const asAdmin: CallContext = { requestId: 'r-forged', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };

let w: RecordsWorld;
let db: TestDatabase;
let client: GrpcClient<recordsv1.RecordsServiceClient>;

beforeAll(async () => {
  w = await startRecordsWorld('recauth', { BIND_HOST: '127.0.0.1' });
  ({ db, client } = w);
});

afterAll(async () => {
  await w?.stop();
});

const projectOf = (code: string): recordsv1.CreateRecordRequest => ({ entityType: 'Project', dataJson: JSON.stringify({ name: code, code }) });
/** The bytes a request travels as (what an assertion covers). */
const bytesOf = (code: string) => recordsv1.CreateRecordRequest.encode(projectOf(code)).finish();

/** createRecord of a Project with exactly `md` as metadata, as any program on the network could send it. */
function rawCreate(md: Metadata, code: string): Promise<ServiceError | null> {
  const req = projectOf(code);
  return new Promise((resolve) => client.raw.createRecord(req, md, { deadline: Date.now() + 5000 }, (err) => resolve(err)));
}

async function projectCodes(): Promise<string[]> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const r = await c.query<{ code: string }>("select data->>'code' as code from records.record where entity_type = 'Project' order by 1");
    return r.rows.map((row) => row.code);
  } finally {
    await c.end();
  }
}

describe('records over gRPC, internal assertion', () => {
  it('refuses a forged Admin principal: no assertion, another key, or one altered after signing', async () => {
    const unsigned = toMetadata(asAdmin);
    const otherKey = toMetadata(asAdmin);
    new InternalAuth('not-this-deployment-secret-0123456789abcdef').sign(otherKey, CREATE, bytesOf('forged2'));
    const altered = toMetadata({ ...asAdmin, principal: { ...asAdmin.principal!, role: 'Viewer' } });
    new InternalAuth(TEST_INTERNAL_AUTH_SECRET).sign(altered, CREATE, bytesOf('forged3'));
    altered.set('x-principal-role', 'Admin');
    for (const [md, code] of [
      [unsigned, 'forged1'],
      [otherKey, 'forged2'],
      [altered, 'forged3'],
    ] as const) {
      const err = await rawCreate(md, code);
      expect(err?.code, code).toBe(status.UNAUTHENTICATED);
    }
    expect(await projectCodes()).toEqual([]);
  });

  it('takes the same call signed with the shared secret', async () => {
    const signed = toMetadata(asAdmin);
    new InternalAuth(TEST_INTERNAL_AUTH_SECRET).sign(signed, CREATE, bytesOf('signed1'));
    expect(await rawCreate(signed, 'signed1')).toBeNull();
    // Captured and sent again, or sent with another body: refused.
    expect((await rawCreate(signed, 'signed1'))?.code).toBe(status.UNAUTHENTICATED);
    expect((await rawCreate(signed, 'forged4'))?.code).toBe(status.UNAUTHENTICATED);
    // And through the client, which signs every call.
    await client.call.createRecord({ entityType: 'Project', dataJson: '{"name":"Signed","code":"signed2"}' }, asAdmin);
    expect(await projectCodes()).toEqual(['signed1', 'signed2']);
  });
});
