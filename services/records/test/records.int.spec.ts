/**
 * The records service in-process, against the real PostgreSQL and NATS, called through a
 * real gRPC client: CRUD semantics, If-Match, validation, and one JetStream event per write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import type { RunningRecords } from '../src/service.js';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const ADMIN = newId();
const asAdmin: CallContext = { requestId: 'r-admin', principal: { userId: ADMIN, role: 'Admin', authKind: 'token' } };
const asService: CallContext = { requestId: 'r-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const asGuest: CallContext = { requestId: 'r-guest', principal: { userId: '', role: 'Guest', authKind: 'guest', guestName: 'Client Jo' } };
const ETAG = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

let w: RecordsWorld;
let prefix: string;
let running: RunningRecords;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let stream: StreamReader;

beforeAll(async () => {
  w = await startRecordsWorld('rec', { OUTBOX_POLL_MS: '200' });
  ({ prefix, running, client } = w);
  stream = await StreamReader.open(prefix);
});

afterAll(async () => {
  await stream?.close();
  await w?.stop();
});

const data = (r: recordsv1.Record | undefined) => JSON.parse(r!.dataJson) as Record<string, unknown>;

async function project(name = 'Feature'): Promise<recordsv1.Record> {
  const res = await client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name, code: name.toLowerCase() }) }, asAdmin);
  return res.record!;
}

describe('records service', () => {
  it('creates and reads a record, with one create event on the stream', async () => {
    const p = await project('Hero');
    expect(p.entityType).toBe('Project');
    expect(p.active).toBe(true);
    expect(p.createdBy).toBe(ADMIN);
    expect(p.projectId).toBeUndefined();
    expect(p.updatedAt).toMatch(ETAG);
    expect(p.createdAt).toMatch(ETAG);
    expect(data(p)).toEqual({ name: 'Hero', code: 'hero' });
    expect(p.id.charAt(14)).toBe('7'); // UUID v7

    const got = await client.call.getRecord({ entityType: 'Project', id: p.id }, asAdmin);
    expect(got.record).toEqual(p);

    const [ev, ...rest] = await stream.exactly(p.id, 1);
    expect(rest).toHaveLength(0);
    expect(ev!.subject).toBe(`${prefix}events.Project.create`);
    expect(ev!.msgId).toBe(ev!.payload.event_id);
    expect(ev!.payload).toMatchObject({
      entity_type: 'Project',
      entity_id: p.id,
      project_id: p.id,
      action: 'create',
      actor: ADMIN,
      changes: { active: true, name: 'Hero', code: 'hero' },
      occurred_at: p.updatedAt,
    });
    expect(Object.keys(ev!.payload.changes).sort()).toEqual(['active', 'code', 'name']);
  });

  it('answers not_found for an unknown id, a malformed id and the wrong type', async () => {
    const p = await project('Other');
    expect((await appErrorOf(client.call.getRecord({ entityType: 'Project', id: newId() }, asAdmin))).kind).toBe('not_found');
    expect((await appErrorOf(client.call.getRecord({ entityType: 'Project', id: 'nope' }, asAdmin))).kind).toBe('not_found');
    expect((await appErrorOf(client.call.getRecord({ entityType: 'Shot', id: p.id }, asAdmin))).kind).toBe('not_found');
  });

  it('checks data and project_id', async () => {
    const p = await project('Checks');
    let err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', dataJson: '{"code":"sh010"}' }, asAdmin));
    expect(err.kind).toBe('invalid');
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['project_id'], type: 'missing' })]);

    err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId: newId(), dataJson: '{}' }, asAdmin));
    expect(err.kind).toBe('invalid');
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['project_id'], type: 'link_not_found' })]);

    err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId: 'not-a-uuid', dataJson: '[1]' }, asAdmin));
    expect(err.problems.map((x) => x.loc.join('.')).sort()).toEqual(['data', 'project_id']);

    // A Shot's project must be a Project, not any record.
    const custom = await client.call.createRecord({ entityType: 'Vehicle', dataJson: '{"plate":"AB-12"}' }, asAdmin);
    err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId: custom.record!.id, dataJson: '{}' }, asAdmin));
    expect(err.problems[0]!.type).toBe('link_not_found');

    const shot = await client.call.createRecord({ entityType: 'Shot', projectId: p.id, status: 'wtg', dataJson: '{"code":"sh010","cut_in":1001}' }, asAdmin);
    expect(shot.record).toMatchObject({ projectId: p.id, status: 'wtg' });
    const [ev] = await stream.exactly(shot.record!.id, 1);
    expect(ev!.subject).toBe(`${prefix}events.Shot.create`);
    expect(ev!.payload.project_id).toBe(p.id);
    expect(ev!.payload.changes).toEqual({ project_id: p.id, status: 'wtg', active: true, code: 'sh010', cut_in: 1001 });

    // Clearing the project of a project-scoped record is refused too.
    err = await appErrorOf(client.call.updateRecord({ entityType: 'Shot', id: shot.record!.id, projectId: {} }, asAdmin));
    expect(err.problems[0]).toMatchObject({ loc: ['project_id'], type: 'missing' });
  });

  it('patches key by key, emits only the changes, and honours If-Match', async () => {
    const p = await project('Patch');
    const created = (
      await client.call.createRecord(
        { entityType: 'Asset', projectId: p.id, dataJson: JSON.stringify({ code: 'tree', asset_type: 'prop', description: 'old' }) },
        asAdmin,
      )
    ).record!;
    const id = created.id;

    const updated = (
      await client.call.updateRecord(
        {
          entityType: 'Asset',
          id,
          status: { value: 'ip' },
          dataJson: JSON.stringify({ code: 'tree', description: null, tags: ['green'] }),
          ifMatch: created.updatedAt,
        },
        asAdmin,
      )
    ).record!;
    expect(updated.status).toBe('ip');
    expect(data(updated)).toEqual({ code: 'tree', asset_type: 'prop', tags: ['green'] });
    expect(updated.updatedAt).toMatch(ETAG);
    expect(updated.updatedAt > created.updatedAt).toBe(true);
    expect(updated.createdAt).toBe(created.createdAt);

    // The old ETag is stale now; nothing is written.
    const stale = await appErrorOf(client.call.updateRecord({ entityType: 'Asset', id, dataJson: '{"code":"bush"}', ifMatch: created.updatedAt }, asAdmin));
    expect(stale.kind).toBe('conflict');
    expect(stale.code).toBe('stale_write');
    const staleRetire = await appErrorOf(client.call.retireRecord({ entityType: 'Asset', id, ifMatch: created.updatedAt }, asAdmin));
    expect(staleRetire.code).toBe('stale_write');
    // The quoted HTTP form of the current ETag is accepted.
    const cleared = (await client.call.updateRecord({ entityType: 'Asset', id, status: {}, ifMatch: `"${updated.updatedAt}"` }, asAdmin)).record!;
    expect(cleared.status).toBeUndefined();

    // A PATCH that changes nothing writes nothing.
    const same = (await client.call.updateRecord({ entityType: 'Asset', id, active: true, dataJson: JSON.stringify({ code: 'tree', missing: null }) }, asAdmin))
      .record!;
    expect(same).toEqual(cleared);

    const events = await stream.exactly(id, 3);
    expect(events.map((e) => e.payload.action)).toEqual(['create', 'update', 'update']);
    expect(events[1]!.subject).toBe(`${prefix}events.Asset.update`);
    expect(events[1]!.payload.changes).toEqual({ status: 'ip', description: null, tags: ['green'] });
    expect(events[2]!.payload.changes).toEqual({ status: null });
    expect(events[1]!.payload.actor).toBe(ADMIN);
    expect(new Set(events.map((e) => e.msgId)).size).toBe(3);
    expect(events.every((e) => e.msgId === e.payload.event_id)).toBe(true);
  });

  it('compares ids in one spelling: upper-case ids are stored and logged lower-case, and re-sending them is no change', async () => {
    const p = await project('Case');
    const up = p.id.toUpperCase();
    const owner = { type: 'User', id: ADMIN.toUpperCase() };
    const shot = (await client.call.createRecord({ entityType: 'Shot', projectId: up, dataJson: JSON.stringify({ code: 'sh1', owner }) }, asAdmin)).record!;
    expect(shot.projectId).toBe(p.id);
    expect(data(shot)).toEqual({ code: 'sh1', owner: { type: 'User', id: ADMIN } });

    const same = (
      await client.call.updateRecord(
        { entityType: 'Shot', id: shot.id.toUpperCase(), projectId: { value: up }, dataJson: JSON.stringify({ owner }), ifMatch: `"${shot.updatedAt}"` },
        asAdmin,
      )
    ).record!;
    expect(same).toEqual(shot);

    const events = await stream.exactly(shot.id, 1);
    expect(events.map((e) => e.payload.action)).toEqual(['create']);
    expect(events[0]!.payload.project_id).toBe(p.id);
    expect(events[0]!.payload.changes).toMatchObject({ project_id: p.id, owner: { type: 'User', id: ADMIN } });
  });

  it('retires and revives', async () => {
    const p = await project('Life');
    const shot = (await client.call.createRecord({ entityType: 'Shot', projectId: p.id, dataJson: '{"code":"sh020"}' }, asAdmin)).record!;
    const id = shot.id;

    const retired = (await client.call.retireRecord({ entityType: 'Shot', id, ifMatch: shot.updatedAt }, asAdmin)).record!;
    expect(retired.id).toBe(id);
    for (const call of [
      () => client.call.getRecord({ entityType: 'Shot', id }, asAdmin),
      () => client.call.updateRecord({ entityType: 'Shot', id, dataJson: '{"code":"x"}' }, asAdmin),
      () => client.call.retireRecord({ entityType: 'Shot', id }, asAdmin),
      () => client.call.reviveRecord({ entityType: 'Asset', id }, asAdmin),
    ]) {
      expect((await appErrorOf(call())).kind).toBe('not_found');
    }

    const revived = (await client.call.reviveRecord({ entityType: 'Shot', id }, asAdmin)).record!;
    expect(data(revived)).toEqual({ code: 'sh020' });
    expect((await client.call.getRecord({ entityType: 'Shot', id }, asAdmin)).record).toEqual(revived);
    expect((await appErrorOf(client.call.reviveRecord({ entityType: 'Shot', id }, asAdmin))).kind).toBe('not_found');
    expect((await appErrorOf(client.call.reviveRecord({ entityType: 'Shot', id: newId() }, asAdmin))).kind).toBe('not_found');

    const events = await stream.exactly(id, 3);
    expect(events.map((e) => e.subject)).toEqual([`${prefix}events.Shot.create`, `${prefix}events.Shot.delete`, `${prefix}events.Shot.create`]);
    expect(events[1]!.payload.changes).toEqual({});
    expect(events[2]!.payload.changes).toEqual({ project_id: p.id, active: true, code: 'sh020', revived: true });

    // A retired project no longer takes new records.
    await client.call.retireRecord({ entityType: 'Project', id: p.id }, asAdmin);
    const err = await appErrorOf(client.call.createRecord({ entityType: 'Shot', projectId: p.id, dataJson: '{}' }, asAdmin));
    expect(err.problems[0]!.type).toBe('link_not_found');
  });

  it('lets only services choose the id; guests are named in changes; writes need a principal', async () => {
    const p = await project('Who');
    const chosen = newId();
    const forbidden = await appErrorOf(client.call.createRecord({ entityType: 'User', id: chosen, dataJson: '{}' }, asAdmin));
    expect(forbidden.kind).toBe('forbidden');

    const user = (await client.call.createRecord({ entityType: 'User', id: chosen, dataJson: '{"name":"Ada"}' }, asService)).record!;
    expect(user.id).toBe(chosen);
    expect(user.createdBy).toBeUndefined();
    const dup = await appErrorOf(client.call.createRecord({ entityType: 'User', id: chosen, dataJson: '{}' }, asService));
    expect(dup.kind).toBe('conflict');
    const [userEvent] = await stream.exactly(chosen, 1);
    expect(userEvent!.payload.actor).toBeNull();

    const note = (await client.call.createRecord({ entityType: 'Note', projectId: p.id, dataJson: '{"content":"lovely"}' }, asGuest)).record!;
    expect(note.createdBy).toBeUndefined();
    const [noteEvent] = await stream.exactly(note.id, 1);
    expect(noteEvent!.payload.actor).toBeNull();
    expect(noteEvent!.payload.changes).toEqual({ project_id: p.id, active: true, content: 'lovely', guest_name: 'Client Jo' });

    const anon = await appErrorOf(client.call.createRecord({ entityType: 'Vehicle', dataJson: '{}' }, { requestId: 'r-anon' }));
    expect(anon.kind).toBe('unauthenticated');
  });

  it('keeps the outbox empty once everything is published', async () => {
    const metrics = await fetch(`http://127.0.0.1:${running.httpPort}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/outbox_published_total\{[^}]*duplicate="false"[^}]*\} \d+/);
    expect(metrics).toMatch(/^outbox_backlog\{[^}]*\} 0$/m);
    const ready = await fetch(`http://127.0.0.1:${running.httpPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { postgres: 'ok', nats: 'ok' } });
  });
});
