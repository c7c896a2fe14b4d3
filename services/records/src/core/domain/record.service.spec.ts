/**
 * The record service against an in-memory store: If-Match, the key-by-key merge, writes that
 * change nothing, TimeLog ownership and the write rules of Representation, Note and Playlist,
 * without PostgreSQL or NATS.
 */
import { AppError, encodeStreamEvent, InProcessBus, isoMicros, parseStreamEvent, type CallContext, type Principal } from '@reelbase/lib-platform';
import { beforeEach, describe, expect, it } from 'vitest';
import { RecordService } from './record.service.js';
import type { NewRecord, OutboxEvent, RecordValues, StoredRecord, StoredSchema } from '../../kernel/domain/record.ports.js';
import type { SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import type { LinkRef } from '../../kernel/domain/schema.validator.js';
import type { InsertResult, RecordStore, RecordTransaction } from './core.ports.js';
import type { WriteGuard } from '../../kernel/domain/record.ports.js';
import { type RecordsBusTopics } from '../../kernel/domain/record.ports.js';

/** Rows and outbox in memory; a transaction works on copies and keeps them only if it resolves. */
class MemoryRecordStore implements RecordStore {
  rows = new Map<string, StoredRecord>();
  outbox: OutboxEvent[] = [];
  /** The ids each transaction locked up front, in the order given. */
  locked: string[][] = [];
  private tick = 0;

  /** A strictly increasing timestamp in the services' format. */
  private now(): string {
    this.tick += 1;
    return isoMicros(new Date(Date.UTC(2026, 0, 1) + this.tick), this.tick % 1000);
  }

  async find(id: string): Promise<StoredRecord | undefined> {
    const row = this.rows.get(id);
    return row && structuredClone(row);
  }

  /** The stored schema (records.schema_state), undefined before the first ApplySchema. */
  schema: StoredSchema | undefined;
  /** Schema reads, to show when the service reloads. */
  schemaLoads = 0;

  async loadSchema(): Promise<StoredSchema | undefined> {
    this.schemaLoads += 1;
    return this.schema && structuredClone(this.schema);
  }

  async applySchema(version: number, snapshotJson: string): Promise<boolean> {
    if (this.schema && this.schema.version >= version) return false;
    this.schema = { version, snapshot: JSON.parse(snapshotJson) as SchemaSnapshot };
    return true;
  }

  async schemaVersion(): Promise<number> {
    return this.schema?.version ?? 0;
  }

  async deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]> {
    return this.dead(this.rows, links);
  }

  async linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]> {
    return this.outside(this.rows, links, projectId);
  }

  private outside(rows: Map<string, StoredRecord>, links: readonly LinkRef[], projectId: string | null): LinkRef[] {
    return links.filter((l) => {
      const row = rows.get(l.id);
      return row !== undefined && !row.retired && row.projectId !== projectId;
    });
  }

  /** Playlists with a live share link. */
  sharedPlaylists = new Set<string>();

  private dead(rows: Map<string, StoredRecord>, links: readonly LinkRef[]): LinkRef[] {
    return links.filter((l) => {
      const row = rows.get(l.id);
      return !row || row.retired || row.entityType !== l.type;
    });
  }

  async insertWithEvent(r: NewRecord, event: OutboxEvent, guard: WriteGuard): Promise<InsertResult> {
    const schemaVersion = await this.schemaVersion();
    const projectLive = r.projectId === null || this.isLiveProject(this.rows, r.projectId);
    const deadLinks = this.dead(this.rows, guard.links);
    if (schemaVersion !== guard.schemaVersion || !projectLive || deadLinks.length) return { row: undefined, schemaVersion, projectLive, deadLinks };
    return { row: this.insert(this.rows, this.outbox, r, event)! };
  }

  private insert(rows: Map<string, StoredRecord>, outbox: OutboxEvent[], r: NewRecord, event: OutboxEvent): StoredRecord | undefined {
    if (rows.has(r.id)) throw AppError.conflict('duplicate_id', 'a record with this id already exists');
    if (r.projectId !== null && !this.isLiveProject(rows, r.projectId)) return undefined;
    const at = this.now();
    const row: StoredRecord = { ...structuredClone(r), createdAt: at, updatedAt: at, retired: false };
    rows.set(r.id, row);
    // As the SQL store does: the event's occurred_at is the row's updated_at.
    const payload = { ...event.payload, occurred_at: at };
    outbox.push({ payload, json: encodeStreamEvent(payload) });
    return structuredClone(row);
  }

  async transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T> {
    const rows = new Map([...this.rows].map(([k, v]) => [k, structuredClone(v)]));
    const outbox = [...this.outbox];
    const write = (id: string, change: Partial<StoredRecord>): StoredRecord => {
      const row = { ...rows.get(id)!, ...structuredClone(change), updatedAt: this.now() };
      rows.set(id, row);
      return structuredClone(row);
    };
    const out = await fn({
      findForUpdate: async (id) => {
        const row = rows.get(id);
        return row && structuredClone(row);
      },
      lockRecords: async (ids) => {
        this.locked.push([...ids]);
      },
      lockForWrite: async (id) => {
        const row = rows.get(id);
        return { record: row && structuredClone(row), schemaVersion: row ? await this.schemaVersion() : -1 };
      },
      schemaVersion: () => this.schemaVersion(),
      loadSchema: () => this.loadSchema(),
      deadLinks: async (links) => this.dead(rows, links),
      insertWithEvent: async (r, event) => this.insert(rows, outbox, r, event),
      update: async (id, v: RecordValues) => write(id, v),
      setRetired: async (id, retired) => write(id, { retired }),
      isLiveProject: async (id) => this.isLiveProject(rows, id),
      linksOutsideProject: async (links, projectId) => this.outside(rows, links, projectId),
      hasLiveShareLink: async (id) => this.sharedPlaylists.has(id),
      appendEvent: async (event) => {
        outbox.push(event);
      },
      insertRecord: async (r) => {
        if (r.projectId !== null && !this.isLiveProject(rows, r.projectId)) return undefined;
        const at = this.now();
        const row: StoredRecord = { ...structuredClone(r), createdAt: at, updatedAt: at, retired: false };
        rows.set(r.id, row);
        return structuredClone(row);
      },
      appendBatch: async (_batchId, events) => void outbox.push(...events),
      storeAnswer: async () => true,
    });
    this.rows = rows;
    this.outbox = outbox;
    return out;
  }

  private isLiveProject(rows: Map<string, StoredRecord>, id: string): boolean {
    const p = rows.get(id);
    return p !== undefined && p.entityType === 'Project' && !p.retired;
  }
}

const ME = '0190a000-0000-7000-8000-0000000000c1';
const OTHER = '0190a000-0000-7000-8000-0000000000c2';
const ctxOf = (role: Principal['role'], userId = ME, authKind: Principal['authKind'] = 'token'): CallContext => ({
  requestId: 'r1',
  principal: { userId, role, authKind },
});
const admin = ctxOf('Admin');
const artist = ctxOf('Artist');
const link = (id: string) => ({ type: 'User', id });

let store: MemoryRecordStore;
let service: RecordService;
let committed: string[];
let projectId: string;

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

beforeEach(async () => {
  store = new MemoryRecordStore();
  const bus = new InProcessBus<RecordsBusTopics>();
  committed = [];
  bus.subscribe('committed', (e) => void committed.push(e.event_id));
  service = new RecordService({ store, bus, maxEventBytes: 64 * 1024 });
  projectId = (await service.create({ entityType: 'Project', dataJson: '{"code":"P"}' }, admin)).id;
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
    expect((await service.get('Shot', shotId)).status).toBe('ip');
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
    expect((await service.get('Shot', shotId)).updatedAt).toBe(etag);
  });

  it('checks that a new project is live, inside the write', async () => {
    const err = await failure(service.update({ entityType: 'Shot', id: shotId, projectId: OTHER }, artist));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['project_id'], type: 'link_not_found' })]);
    expect(await failure(service.update({ entityType: 'Shot', id: shotId, projectId: null }, artist))).toMatchObject({ kind: 'invalid' });
  });

  it('retires (404 afterwards) and revives as a create carrying the record', async () => {
    await service.retire('Shot', shotId, `"${etag}"`, artist);
    expect(store.outbox.at(-1)!.payload).toMatchObject({ action: 'delete', changes: {} });
    expect((await failure(service.get('Shot', shotId))).kind).toBe('not_found');
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

describe('RecordService Representations', () => {
  const media = (ctx: CallContext): CallContext => ({ ...ctx, principal: { ...ctx.principal!, via: 'media-transcode' } });
  const publish = (ctx: CallContext, data: Record<string, unknown>) =>
    service.create({ entityType: 'Representation', projectId, dataJson: JSON.stringify(data) }, ctx);

  it('lets every role publish name, version and files, and no person write a transcode field, Admin included', async () => {
    const viewer = ctxOf('Viewer');
    const rep = await publish(viewer, { name: 'plate', files: { exr: { path: '/a' } } });
    for (const field of ['transcode_status', 'transcode_error', 'review_kind', 'review_media_key', 'thumbnail_media_key', 'attempts']) {
      for (const ctx of [viewer, admin, ctxOf('Service', '', 'service')]) {
        expect(await failure(publish(ctx, { name: 'x', [field]: null })), field).toMatchObject({ kind: 'forbidden' });
        expect(await failure(service.update({ entityType: 'Representation', id: rep.id, dataJson: JSON.stringify({ [field]: 'done' }) }, ctx))).toMatchObject({
          kind: 'forbidden',
        });
      }
    }
    // 403 before the body's 422 (a malformed project id is no reason to answer otherwise).
    expect(await failure(service.create({ entityType: 'Representation', projectId: 'nope', dataJson: '{"attempts":1}' }, viewer))).toMatchObject({
      kind: 'forbidden',
    });
    expect((await service.update({ entityType: 'Representation', id: rep.id, dataJson: '{"name":"plate v2"}' }, viewer)).data.name).toBe('plate v2');
    expect(store.rows.get(rep.id)!.data).toEqual({ name: 'plate v2', files: { exr: { path: '/a' } } });
  });

  it('lets the media service write them, for the uploading person and for itself', async () => {
    const rep = await publish(media(ctxOf('Viewer')), { name: 'up.mov', transcode_status: 'pending', attempts: 0 });
    expect(rep.createdBy).toBe(ME);
    const own = media({ requestId: 'job', principal: { userId: '', role: 'Service', authKind: 'service' } });
    const done = await service.update({ entityType: 'Representation', id: rep.id, dataJson: '{"transcode_status":"done","attempts":1}' }, own);
    expect(done.data).toMatchObject({ transcode_status: 'done', attempts: 1 });
  });
});

describe('RecordService Notes', () => {
  const note = (ctx: CallContext, data: Record<string, unknown> = { content: 'hi' }) =>
    service.create({ entityType: 'Note', projectId, dataJson: JSON.stringify(data) }, ctx);
  const guest: CallContext = { requestId: 'g', principal: { userId: '', role: 'Guest', authKind: 'guest', guestName: 'Client' } };
  const patch = (id: string, ctx: CallContext, data: Record<string, unknown> = { content: 'edited' }) =>
    service.update({ entityType: 'Note', id, dataJson: JSON.stringify(data) }, ctx);

  it('sets the author to the caller; naming yourself is accepted, anyone else is 403', async () => {
    const mine = await note(artist);
    expect(mine.data.author).toEqual(link(ME));
    expect(store.outbox.at(-1)!.payload.changes).toMatchObject({ author: link(ME) });
    expect((await note(artist, { content: 'x', author: link(ME.toUpperCase()) })).data.author).toEqual(link(ME));
    for (const ctx of [artist, admin]) expect(await failure(note(ctx, { content: 'x', author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
    // A service acting on its own keeps who wrote an imported note; it has no author of its own.
    const svc = ctxOf('Service', '', 'service');
    expect((await note(svc, { content: 'x', author: link(OTHER) })).data.author).toEqual(link(OTHER));
    expect((await note(svc)).data.author).toBeUndefined();
    expect(await failure(patch(mine.id, artist, { author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
    expect(await failure(patch(mine.id, artist, { author: null }))).toMatchObject({ kind: 'forbidden' });
  });

  it('writes verdict and guest_name only for a share link guest, for every role else 403', async () => {
    const mine = await note(artist);
    for (const ctx of [artist, admin, ctxOf('Supervisor'), ctxOf('Service', '', 'service')]) {
      for (const data of [
        { content: 'x', verdict: 'approve' },
        { content: 'x', guest_name: 'Client' },
      ]) {
        expect(await failure(note(ctx, data))).toMatchObject({ kind: 'forbidden' });
        expect(await failure(patch(mine.id, ctx, data))).toMatchObject({ kind: 'forbidden' });
      }
    }
    const theirs = await note(guest, { content: 'ok', verdict: 'approve', guest_name: 'Client' });
    expect(theirs.data).toEqual({ content: 'ok', verdict: 'approve', guest_name: 'Client' });
    expect(await failure(note(guest, { content: 'x', author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
  });

  it('is edited and retired by its author, Admin or Supervisor; revived by the same', async () => {
    const mine = await note(artist);
    for (const ctx of [ctxOf('Artist', OTHER), ctxOf('Coordinator', OTHER), ctxOf('Viewer', OTHER), guest]) {
      expect(await failure(patch(mine.id, ctx))).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('author') });
      expect(await failure(service.retire('Note', mine.id, undefined, ctx))).toMatchObject({ kind: 'forbidden' });
    }
    expect((await patch(mine.id, artist)).data.content).toBe('edited');
    expect((await patch(mine.id, ctxOf('Supervisor', OTHER), { content: 'by sup' })).data).toEqual({ content: 'by sup', author: link(ME) });
    await patch(mine.id, ctxOf('Admin', OTHER), { content: 'by admin' });
    await service.retire('Note', mine.id, undefined, ctxOf('Supervisor', OTHER));
    expect(await failure(service.revive('Note', mine.id, ctxOf('Artist', OTHER)))).toMatchObject({ kind: 'forbidden' });
    await service.revive('Note', mine.id, artist);
    // A 404 stays a 404: existence is judged before whose the note is.
    expect(await failure(patch(OTHER, ctxOf('Viewer', OTHER)))).toMatchObject({ kind: 'not_found' });
  });

  it('never edits a guest note; Admin, Supervisor and Coordinator retire and revive it', async () => {
    const theirs = await note(guest, { content: 'ok', verdict: 'approve', guest_name: 'Client' });
    for (const ctx of [admin, ctxOf('Supervisor'), ctxOf('Coordinator'), artist, ctxOf('Service', '', 'service')]) {
      expect(await failure(patch(theirs.id, ctx))).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('never edited') });
    }
    for (const ctx of [artist, ctxOf('Viewer'), guest])
      expect(await failure(service.retire('Note', theirs.id, undefined, ctx))).toMatchObject({ kind: 'forbidden' });
    await service.retire('Note', theirs.id, undefined, ctxOf('Coordinator'));
    expect(await failure(service.revive('Note', theirs.id, artist))).toMatchObject({ kind: 'forbidden' });
    await service.revive('Note', theirs.id, ctxOf('Coordinator'));
    expect(store.rows.get(theirs.id)!.data).toEqual({ content: 'ok', verdict: 'approve', guest_name: 'Client' });
  });
});

describe('RecordService Playlists', () => {
  const version = async (project: string) => service.create({ entityType: 'Version', projectId: project, dataJson: '{"code":"v"}' }, artist);
  const ref = (r: { id: string }) => ({ type: 'Version', id: r.id });

  it('holds Versions of its own project only: 422 at the offending element, on create, patch and a move', async () => {
    const other = (await service.create({ entityType: 'Project', dataJson: '{"code":"Q"}' }, admin)).id;
    const [a, b, foreign] = [await version(projectId), await version(projectId), await version(other)];
    const bad = await failure(
      service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a), ref(foreign), ref(b)] }) }, artist),
    );
    expect(bad.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 1], type: 'link_project' })]);
    const list = await service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a)] }) }, artist);
    const patched = await failure(
      service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions: [ref(foreign), ref(a)] }) }, admin),
    );
    expect(patched.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    const moved = await failure(service.update({ entityType: 'Playlist', id: list.id, projectId: other }, admin));
    expect(moved.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    expect(
      (await service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions: [ref(b), ref(a)] }) }, artist)).data.versions,
    ).toEqual([ref(b), ref(a)]);
  });

  it('while shared, changes its versions only for Admin, Supervisor and Coordinator; its name stays open', async () => {
    const [a, b] = [await version(projectId), await version(projectId)];
    const list = await service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a)] }) }, artist);
    store.sharedPlaylists.add(list.id);
    const change = (ctx: CallContext, versions: unknown) =>
      service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions }) }, ctx);
    for (const ctx of [artist, ctxOf('Viewer')]) {
      expect(await failure(change(ctx, [ref(a), ref(b)]))).toMatchObject({ kind: 'forbidden' });
      expect(await failure(change(ctx, []))).toMatchObject({ kind: 'forbidden' });
      // 403 before the body's 422.
      expect(await failure(change(ctx, [{ type: 'Version', id: 'bad' }]))).toMatchObject({ kind: 'forbidden' });
    }
    // The same versions again is no change.
    await change(artist, [ref(a)]);
    await service.update({ entityType: 'Playlist', id: list.id, dataJson: '{"name":"renamed"}' }, artist);
    for (const role of ['Admin', 'Supervisor', 'Coordinator'] as const) await change(ctxOf(role), [ref(b), ref(a)]);
    store.sharedPlaylists.clear();
    expect((await change(artist, [ref(a)])).data.versions).toEqual([ref(a)]);
  });
});

describe('RecordService with a schema', () => {
  const snapshot = (version: number, sizes: string[]): SchemaSnapshot => ({
    version,
    entity_types: [
      { code: 'Project', project_scoped: false, fields: [{ code: 'code', type: 'text' }] },
      {
        code: 'Shot',
        project_scoped: true,
        fields: [
          { code: 'code', type: 'text', required: true },
          { code: 'size', type: 'enum', options: sizes.map((code) => ({ code })) },
          { code: 'owner', type: 'link', link_types: ['User'] },
          { code: 'cut_in', type: 'integer', default: 1001 },
        ],
      },
      {
        code: 'Task',
        project_scoped: true,
        fields: [
          { code: 'name', type: 'text' },
          { code: 'step', type: 'text' },
          { code: 'priority', type: 'text' },
          { code: 'entity', type: 'link' },
          { code: 'estimate_minutes', type: 'integer' },
        ],
      },
      { code: 'User', project_scoped: false, fields: [{ code: 'name', type: 'text' }] },
    ],
    statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }],
    steps: [{ code: 'anim' }, { code: 'comp' }],
    priorities: [{ code: 'high' }],
    transitions: {
      Shot: [
        { from: 'wtg', to: ['ip'] },
        { from: 'ip', to: ['fin'], roles: ['Supervisor'] },
      ],
    },
    task_templates: [
      {
        code: 'basic',
        entity_type: 'Shot',
        tasks: [
          { name: 'Animation', step: 'anim', estimate_minutes: 480 },
          { name: 'Comp', step: 'comp' },
        ],
      },
    ],
  });
  const apply = (version: number, sizes = ['s', 'm']) => store.applySchema(version, JSON.stringify(snapshot(version, sizes)));
  const shot = (data: Record<string, unknown>, extra: Partial<{ status: string; taskTemplate: string }> = {}) =>
    service.create({ entityType: 'Shot', projectId, dataJson: JSON.stringify(data), ...extra }, artist);

  beforeEach(async () => {
    await apply(1);
  });

  it('refuses unknown keys, bad values and missing required fields at once and writes nothing', async () => {
    const before = store.rows.size;
    const err = await failure(shot({ size: 'xl', colour: 1 }, { status: 'nope' }));
    expect(err.problems.map((p) => p.loc.join('.')).sort()).toEqual(['data.code', 'data.colour', 'data.size', 'status']);
    expect(store.rows.size).toBe(before);
    expect((await failure(service.create({ entityType: 'Widget', projectId }, artist))).kind).toBe('not_found');
  });

  it('applies defaults and accepts a valid write', async () => {
    const r = await shot({ code: 'sh010', size: 's' }, { status: 'wtg' });
    expect(r.data).toEqual({ code: 'sh010', size: 's', cut_in: 1001 });
  });

  it('refuses links to missing, retired or other-typed records, naming each', async () => {
    const user = await service.create({ entityType: 'User', dataJson: '{"name":"u"}' }, admin);
    await shot({ code: 'a', owner: link(user.id) });
    const err = await failure(shot({ code: 'b', owner: link(OTHER) }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'owner'], type: 'link_not_found' })]);
    await service.retire('User', user.id, undefined, admin);
    expect((await failure(shot({ code: 'c', owner: link(user.id) }))).problems[0]!.type).toBe('link_not_found');
    // Named together with the other problems of the write.
    const all = await failure(shot({ code: 'd', size: 'xl', owner: link(OTHER) }));
    expect(all.problems.map((p) => [p.loc.join('.'), p.type])).toEqual([
      ['data.size', 'enum'],
      ['data.owner', 'link_not_found'],
    ]);
  });

  it('a write after a newer snapshot was stored validates against it, whatever this process held', async () => {
    await shot({ code: 'warm', size: 's' });
    // Another replica (or the schema service) stores version 2: option 'xl' added, 's' removed.
    await apply(2, ['m', 'xl']);
    expect((await shot({ code: 'a', size: 'xl' })).data.size).toBe('xl');
    expect((await failure(shot({ code: 'b', size: 's' }))).problems[0]!.loc).toEqual(['data', 'size']);
    await apply(3, ['s']);
    const existing = [...store.rows.values()].find((r) => r.data.code === 'warm')!;
    expect((await failure(service.update({ entityType: 'Shot', id: existing.id, dataJson: '{"size":"xl"}' }, artist))).problems[0]!.loc).toEqual([
      'data',
      'size',
    ]);
    // A patch that does not touch a field is not refused for the field's old value.
    await apply(4, ['m']);
    expect((await service.update({ entityType: 'Shot', id: existing.id, dataJson: '{"code":"warm2"}' }, artist)).data.size).toBe('s');
  });

  it('enforces transitions per role, Admins included; a create with a status is not a transition', async () => {
    const r = await shot({ code: 'a' }, { status: 'wtg' });
    expect(await failure(service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, admin))).toMatchObject({
      kind: 'conflict',
      code: 'transition_not_allowed',
    });
    await service.update({ entityType: 'Shot', id: r.id, status: 'ip' }, artist);
    expect(await failure(service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, artist))).toMatchObject({ code: 'transition_not_allowed' });
    expect((await service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, ctxOf('Supervisor'))).status).toBe('fin');
    expect((await shot({ code: 'b' }, { status: 'fin' })).status).toBe('fin');
  });

  it('creates the task template’s tasks in the same write, one event each; an unknown template is 422', async () => {
    const before = store.outbox.length;
    const r = await shot({ code: 'sh020' }, { taskTemplate: 'basic' });
    const tasks = [...store.rows.values()].filter((row) => row.entityType === 'Task');
    expect(tasks.map((t) => t.data)).toEqual([
      { name: 'Animation', step: 'anim', entity: { type: 'Shot', id: r.id }, estimate_minutes: 480 },
      { name: 'Comp', step: 'comp', entity: { type: 'Shot', id: r.id } },
    ]);
    expect(store.outbox.slice(before).map((e) => e.payload.entity_type)).toEqual(['Shot', 'Task', 'Task']);
    expect(committed.slice(-3)).toEqual(store.outbox.slice(before).map((e) => e.payload.event_id));
    const rows = store.rows.size;
    const err = await failure(shot({ code: 'sh030' }, { taskTemplate: 'nope' }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['task_template'] })]);
    expect(store.rows.size).toBe(rows);
  });
});
