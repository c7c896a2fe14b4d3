/**
 * The record service against an in-memory store (test/record.service.memory.ts): creates, If-Match,
 * the key-by-key merge, writes that change nothing, batches, ids in another case and TimeLog
 * ownership, without PostgreSQL or NATS.
 */
import { parseStreamEvent, type CallContext } from '@reelbase/lib-platform';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordService } from './record.service.js';
import { admin, artist, ctxOf, failure, link, ME, newRecordService, OTHER, type MemoryRecordStore } from '../../../test/record.service.memory.js';

let store: MemoryRecordStore;
let service: RecordService;
let committed: string[];
let projectId: string;

beforeEach(async () => {
  ({ store, service, committed, projectId } = await newRecordService());
});

describe('RecordService create', () => {
  it('writes the record and one event that the events service accepts', async () => {
    const shot = await service.create({ entityType: 'Shot', projectId, status: 'wtg', dataJson: '{"code":"sh010","x":null}' }, artist);
    expect(shot.data).toEqual({ code: 'sh010' });
    const event = store.outbox.at(-1)!;
    expect(parseStreamEvent(event.json)).toMatchObject({ ok: true });
    expect(event.payload).toMatchObject({
      entity_id: shot.id,
      action: 'create',
      actor: ME,
      project_id: projectId,
      changes: { project_id: projectId, status: 'wtg', active: true, code: 'sh010' },
      occurred_at: shot.updatedAt,
    });
    expect(committed).toEqual([store.outbox[0]!.payload.event_id, event.payload.event_id]);
  });

  it('reports field paths without a body/path prefix; the gateway adds it', async () => {
    const err = await failure(service.create({ entityType: 'Shot', thumbnailId: 'nope', dataJson: '[1]' }, artist));
    expect(err.problems.map((p) => p.loc)).toEqual([['data'], ['thumbnail_id'], ['project_id']]);
    expect((await failure(service.create({ entityType: 'shot' }, artist))).problems[0]!.loc).toEqual(['entity_type']);
    const missing = await failure(service.create({ entityType: 'Shot', projectId: OTHER }, artist));
    expect(missing.problems).toEqual([expect.objectContaining({ loc: ['project_id'], type: 'link_not_found' })]);
    expect(store.outbox).toHaveLength(1);
  });

  it('passes a store conflict through and refuses an event above the size limit before writing', async () => {
    const svc: CallContext = { requestId: 'r', principal: { userId: '', role: 'Service', authKind: 'service' } };
    await service.create({ entityType: 'User', id: OTHER }, svc);
    expect(await failure(service.create({ entityType: 'User', id: OTHER }, svc))).toMatchObject({ kind: 'conflict', code: 'duplicate_id' });
    const big = JSON.stringify({ blob: 'x'.repeat(70 * 1024) });
    expect(await failure(service.create({ entityType: 'Asset', projectId, dataJson: big }, artist))).toMatchObject({ kind: 'too_large' });
    expect(store.rows.size).toBe(2);
  });
});

describe('RecordService update', () => {
  let shotId: string;
  let etag: string;
  beforeEach(async () => {
    const shot = await service.create({ entityType: 'Shot', projectId, dataJson: '{"code":"sh010","tags":["a"],"cut_in":1001}' }, artist);
    shotId = shot.id;
    etag = shot.updatedAt;
  });

  it.each([
    ['the bare value', (e: string) => e],
    ['the quoted ETag', (e: string) => `"${e}"`],
    ['a weak ETag', (e: string) => `W/"${e}"`],
    ['"*"', () => '*'],
  ])('applies a PATCH whose If-Match is %s', async (_name, form) => {
    const r = await service.update({ entityType: 'Shot', id: shotId, status: 'ip', ifMatch: form(etag) }, artist);
    expect(r.status).toBe('ip');
    expect(r.updatedAt > etag).toBe(true);
  });

  it('refuses a stale If-Match with 409 stale_write and writes nothing', async () => {
    await service.update({ entityType: 'Shot', id: shotId, status: 'ip' }, artist);
    const before = store.outbox.length;
    const err = await failure(service.update({ entityType: 'Shot', id: shotId, status: 'fin', ifMatch: `"${etag}"` }, artist));
    expect(err).toMatchObject({ kind: 'conflict', code: 'stale_write' });
    expect((await service.get('Shot', shotId, artist)).status).toBe('ip');
    expect(store.outbox).toHaveLength(before);
    const retire = await failure(service.retire('Shot', shotId, etag, artist));
    expect(retire.code).toBe('stale_write');
  });

  it('merges data key by key: a null removes a key, the event names only what changed', async () => {
    const r = await service.update({ entityType: 'Shot', id: shotId, dataJson: '{"tags":["a"],"cut_in":null,"cut_out":1100,"gone":null}' }, artist);
    expect(r.data).toEqual({ code: 'sh010', tags: ['a'], cut_out: 1100 });
    expect(store.outbox.at(-1)!.payload).toMatchObject({ action: 'update', changes: { cut_in: null, cut_out: 1100 } });
  });

  it('writes no event and keeps the ETag when a PATCH changes nothing', async () => {
    const before = store.outbox.length;
    const eventsBefore = committed.length;
    const r = await service.update({ entityType: 'Shot', id: shotId, projectId, status: null, dataJson: '{"code":"sh010","gone":null}' }, artist);
    expect(r.updatedAt).toBe(etag);
    expect(store.outbox).toHaveLength(before);
    expect(committed).toHaveLength(eventsBefore);
    expect((await service.get('Shot', shotId, artist)).updatedAt).toBe(etag);
  });

  it('checks that a new project is live, inside the write', async () => {
    const err = await failure(service.update({ entityType: 'Shot', id: shotId, projectId: OTHER }, artist));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['project_id'], type: 'link_not_found' })]);
    expect(await failure(service.update({ entityType: 'Shot', id: shotId, projectId: null }, artist))).toMatchObject({ kind: 'invalid' });
  });

  it('retires (404 afterwards) and revives as a create carrying the record', async () => {
    await service.retire('Shot', shotId, `"${etag}"`, artist);
    expect(store.outbox.at(-1)!.payload).toMatchObject({ action: 'delete', changes: {} });
    expect((await failure(service.get('Shot', shotId, artist))).kind).toBe('not_found');
    expect((await failure(service.update({ entityType: 'Shot', id: shotId, status: 'x' }, artist))).kind).toBe('not_found');
    const back = await service.revive('Shot', shotId, artist);
    expect(back.data.code).toBe('sh010');
    expect(store.outbox.at(-1)!.payload).toMatchObject({ action: 'create', changes: { code: 'sh010', revived: true } });
    expect((await failure(service.revive('Shot', shotId, artist))).kind).toBe('not_found');
  });
});

describe('RecordService batches', () => {
  it('locks every record it updates or retires up front, in id order, each once, before its first request runs', async () => {
    const [a, b] = [
      await service.create({ entityType: 'Shot', projectId, dataJson: '{"code":"a"}' }, artist),
      await service.create({ entityType: 'Shot', projectId, dataJson: '{"code":"b"}' }, artist),
    ].sort((x, y) => (x.id < y.id ? -1 : 1));
    const requests = [
      { request_type: 'update', entity_type: 'Shot', entity_id: b!.id.toUpperCase(), data: { code: 'b2' } },
      { request_type: 'create', entity_type: 'Shot', project_id: projectId, data: { code: 'c' } },
      { request_type: 'update', entity_type: 'Shot', entity_id: a!.id, data: { code: 'a2' } },
      { request_type: 'delete', entity_type: 'Shot', entity_id: b!.id },
      { request_type: 'update', entity_type: 'Shot', entity_id: 'not-an-id' },
    ];
    await failure(service.batch(JSON.stringify(requests), artist));
    expect(store.locked).toEqual([[a!.id, b!.id]]);
  });
});

describe('RecordService ids in another case', () => {
  it('stores and logs a create’s ids lower-case, links inside data included', async () => {
    const userLink = { type: 'User', id: ME.toUpperCase() };
    const shot = await service.create(
      { entityType: 'Shot', projectId: projectId.toUpperCase(), dataJson: JSON.stringify({ code: 'a', owner: userLink, list: [userLink] }) },
      artist,
    );
    expect(shot.projectId).toBe(projectId);
    expect(shot.data).toEqual({ code: 'a', owner: link(ME), list: [link(ME)] });
    expect(store.outbox.at(-1)!.payload.changes).toEqual({ project_id: projectId, active: true, code: 'a', owner: link(ME), list: [link(ME)] });
    const svc: CallContext = { requestId: 'r', principal: { userId: '', role: 'Service', authKind: 'service' } };
    const user = await service.create({ entityType: 'User', id: OTHER.toUpperCase() }, svc);
    expect(user.id).toBe(OTHER);
    expect(store.outbox.at(-1)!.payload.entity_id).toBe(OTHER);
  });

  it('treats a PATCH re-sending the same ids in upper case as no change: no event, same ETag', async () => {
    const shot = await service.create({ entityType: 'Shot', projectId, dataJson: JSON.stringify({ owner: link(ME) }) }, artist);
    const before = store.outbox.length;
    const r = await service.update(
      {
        entityType: 'Shot',
        id: shot.id.toUpperCase(),
        projectId: projectId.toUpperCase(),
        dataJson: JSON.stringify({ owner: link(ME.toUpperCase()) }),
        ifMatch: `"${shot.updatedAt}"`,
      },
      artist,
    );
    expect(r.updatedAt).toBe(shot.updatedAt);
    expect(r.projectId).toBe(projectId);
    expect(store.outbox).toHaveLength(before);
  });
});

describe('RecordService TimeLogs', () => {
  const timeLog = (user: string, ctx: CallContext) =>
    service.create({ entityType: 'TimeLog', projectId, dataJson: JSON.stringify({ user: link(user), minutes: 30 }) }, ctx);

  it('lets every role log its own time and only Admin, Supervisor and Coordinator log for others', async () => {
    await timeLog(ME, artist);
    await timeLog(ME, ctxOf('Viewer'));
    expect(await failure(timeLog(OTHER, artist))).toMatchObject({ kind: 'forbidden' });
    for (const role of ['Admin', 'Supervisor', 'Coordinator'] as const) await timeLog(OTHER, ctxOf(role));
    const missing = await failure(service.create({ entityType: 'TimeLog', projectId, dataJson: '{"minutes":5}' }, artist));
    expect(missing.problems).toEqual([expect.objectContaining({ loc: ['data', 'user'], type: 'missing' })]);
  });

  it('guards changes, retirement and revival of somebody else’s TimeLog', async () => {
    const theirs = await timeLog(OTHER, ctxOf('Supervisor'));
    expect(await failure(service.update({ entityType: 'TimeLog', id: theirs.id, dataJson: '{"minutes":1}' }, artist))).toMatchObject({ kind: 'forbidden' });
    expect(await failure(service.retire('TimeLog', theirs.id, undefined, artist))).toMatchObject({ kind: 'forbidden' });
    await service.retire('TimeLog', theirs.id, undefined, ctxOf('Coordinator'));
    expect(await failure(service.revive('TimeLog', theirs.id, artist))).toMatchObject({ kind: 'forbidden' });
    await service.revive('TimeLog', theirs.id, admin);
  });

  it('refuses a patch that hands one’s own TimeLog to somebody else, and allows it for a Supervisor', async () => {
    const mine = await timeLog(ME, artist);
    const handOver = JSON.stringify({ user: link(OTHER) });
    expect(await failure(service.update({ entityType: 'TimeLog', id: mine.id, dataJson: handOver }, artist))).toMatchObject({ kind: 'forbidden' });
    expect(await failure(service.update({ entityType: 'TimeLog', id: mine.id, dataJson: '{"user":null}' }, artist))).toMatchObject({ kind: 'forbidden' });
    const own = await service.update({ entityType: 'TimeLog', id: mine.id, dataJson: '{"minutes":45}' }, artist);
    expect(own.data.minutes).toBe(45);
    await service.retire('TimeLog', mine.id, undefined, artist);
    await service.revive('TimeLog', mine.id, artist);
    const moved = await service.update({ entityType: 'TimeLog', id: mine.id, dataJson: handOver }, ctxOf('Supervisor', OTHER));
    expect(moved.data.user).toEqual(link(OTHER));
  });
});
