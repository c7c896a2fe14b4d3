/**
 * What a client cannot break: an event too large for the stream is refused before it commits
 * (and one that slipped into the outbox is published without its changes instead of blocking
 * every later event), values PostgreSQL cannot store are a 422, and TimeLogs belong to their
 * user (docs/api-notes.md, "Roles and who may write").
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeStreamEvent, isoMicros, newId, type CallContext, type GrpcClient, type StreamEvent } from '@reelbase/lib-platform';
import { appErrorOf, type TestDatabase } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const ADMIN = newId();
const ARTIST = newId();
const VIEWER = newId();
const as = (userId: string, role: 'Admin' | 'Artist' | 'Viewer' | 'Supervisor'): CallContext => ({
  requestId: `r-${role}`,
  principal: { userId, role, authKind: 'token' },
});

let w: RecordsWorld;
let db: TestDatabase;
let prefix: string;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let stream: StreamReader;
let projectId: string;

beforeAll(async () => {
  w = await startRecordsWorld('lim', { OUTBOX_POLL_MS: '100', MAX_EVENT_BYTES: '20000' });
  ({ db, prefix, client } = w);
  stream = await StreamReader.open(prefix);
  projectId = (await client.call.createRecord({ entityType: 'Project', dataJson: '{"name":"Limits","code":"lim"}' }, as(ADMIN, 'Admin'))).record!.id;
});

afterAll(async () => {
  await stream?.close();
  await w?.stop();
});

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    return Number((await c.query(sql, params)).rows[0].n);
  } finally {
    await c.end();
  }
}

describe('records limits', () => {
  it('refuses a write whose event would exceed MAX_EVENT_BYTES, before anything commits', async () => {
    const big = 'x'.repeat(30_000);
    const before = await count('select count(*) as n from records.record');
    const err = await appErrorOf(
      client.call.createRecord({ entityType: 'Shot', projectId, dataJson: JSON.stringify({ description: big }) }, as(ADMIN, 'Admin')),
    );
    expect(err.kind).toBe('too_large');
    expect(await count('select count(*) as n from records.record')).toBe(before);

    const shot = (await client.call.createRecord({ entityType: 'Shot', projectId, dataJson: '{"code":"sh010"}' }, as(ADMIN, 'Admin'))).record!;
    const patch = await appErrorOf(
      client.call.updateRecord({ entityType: 'Shot', id: shot.id, dataJson: JSON.stringify({ description: big }) }, as(ADMIN, 'Admin')),
    );
    expect(patch.kind).toBe('too_large');
    const after = (await client.call.getRecord({ entityType: 'Shot', id: shot.id }, as(ADMIN, 'Admin'))).record!;
    expect(JSON.parse(after.dataJson)).toEqual({ code: 'sh010' });
  });

  it('answers invalid, never internal, for values PostgreSQL cannot store', async () => {
    for (const dataJson of ['{"code":"a\\u0000b"}', '{"code":"\\ud800"}']) {
      const err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId, dataJson }, as(ADMIN, 'Admin')));
      expect(err.kind, dataJson).toBe('invalid');
    }
    const status = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId, status: 'ip\u0000', dataJson: '{}' }, as(ADMIN, 'Admin')));
    expect(status.kind).toBe('invalid');
  });

  it('publishes an outbox row too large for NATS without its changes, and keeps going', async () => {
    const eventId = newId();
    const entityId = newId();
    const payload: StreamEvent = {
      event_id: eventId,
      entity_type: 'Shot',
      entity_id: entityId,
      project_id: projectId,
      action: 'create',
      actor: ADMIN,
      changes: { description: 'y'.repeat(1_200_000) },
      occurred_at: isoMicros(new Date()),
    };
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query('insert into records.outbox (event_id, subject, payload) values ($1, $2, $3::jsonb)', [
      eventId,
      `${prefix}events.Shot.create`,
      encodeStreamEvent(payload),
    ]);
    await c.end();
    const next = (await client.call.createRecord({ entityType: 'Shot', projectId, dataJson: '{"code":"after"}' }, as(ADMIN, 'Admin'))).record!;

    const [big] = await stream.exactly(entityId, 1);
    expect(big!.payload.changes).toEqual({});
    expect(big!.payload.changes_truncated).toBe(true);
    expect(await stream.exactly(next.id, 1)).toHaveLength(1);
    expect(await count('select count(*) as n from records.outbox')).toBe(0);
  });

  it('lets every role log, change and remove only its own time; time admins handle anyone’s', async () => {
    const mine = (u: string) => JSON.stringify({ user: { type: 'User', id: u }, minutes: 30 });
    const own = (await client.call.createRecord({ entityType: 'TimeLog', projectId, dataJson: mine(VIEWER) }, as(VIEWER, 'Viewer'))).record!;
    await client.call.updateRecord({ entityType: 'TimeLog', id: own.id, dataJson: '{"minutes":45}' }, as(VIEWER, 'Viewer'));

    expect((await appErrorOf(client.call.createRecord({ entityType: 'TimeLog', projectId, dataJson: mine(ARTIST) }, as(VIEWER, 'Viewer')))).kind).toBe(
      'forbidden',
    );
    expect((await appErrorOf(client.call.createRecord({ entityType: 'TimeLog', projectId, dataJson: '{"minutes":5}' }, as(VIEWER, 'Viewer')))).kind).toBe(
      'invalid',
    );

    const artists = (await client.call.createRecord({ entityType: 'TimeLog', projectId, dataJson: mine(ARTIST) }, as(ARTIST, 'Artist'))).record!;
    expect(
      (await appErrorOf(client.call.updateRecord({ entityType: 'TimeLog', id: artists.id, dataJson: '{"minutes":999}' }, as(VIEWER, 'Viewer')))).kind,
    ).toBe('forbidden');
    expect((await appErrorOf(client.call.retireRecord({ entityType: 'TimeLog', id: artists.id }, as(VIEWER, 'Viewer')))).kind).toBe('forbidden');
    // Nor may an owner hand their time to someone else.
    expect(
      (
        await appErrorOf(
          client.call.updateRecord(
            { entityType: 'TimeLog', id: own.id, dataJson: JSON.stringify({ user: { type: 'User', id: ARTIST } }) },
            as(VIEWER, 'Viewer'),
          ),
        )
      ).kind,
    ).toBe('forbidden');

    await client.call.updateRecord({ entityType: 'TimeLog', id: artists.id, dataJson: '{"minutes":60}' }, as(newId(), 'Supervisor'));
    await client.call.retireRecord({ entityType: 'TimeLog', id: own.id }, as(VIEWER, 'Viewer'));
    expect((await appErrorOf(client.call.reviveRecord({ entityType: 'TimeLog', id: own.id }, as(ARTIST, 'Artist')))).kind).toBe('forbidden');
    await client.call.reviveRecord({ entityType: 'TimeLog', id: own.id }, as(VIEWER, 'Viewer'));
  });
});
