/**
 * SiteSync over a scripted store: which events each change writes (and in which transaction),
 * the order of its checks, and what an agent is answered. The SQL itself runs against PostgreSQL
 * in test/sitesync.int.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InProcessBus, isAppError, newId, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import type { OutboxEvent } from '../../kernel/domain/record.ports.js';
import { LAPSE_ERROR, SiteSync } from './sitesync.service.js';
import type { SiteState } from './sitesync.types.js';
import type { MovedState, SiteSyncStore, SiteSyncTransaction } from './sitesync.ports.js';
import type { RecordsBusTopics } from '../../kernel/domain/record.ports.js';

const artist: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Artist', authKind: 'api_key' } };
const viewer: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Viewer', authKind: 'token' } };

function state(over: Partial<SiteState> = {}): SiteState {
  return {
    representationId: newId(),
    site: 'paris',
    projectId: newId(),
    status: 'queued',
    priority: 50,
    progress: 0,
    size: null,
    totalSize: null,
    attempts: 0,
    error: null,
    agent: null,
    leaseExpiresAt: null,
    updatedAt: '2026-01-01T00:00:00.000000Z',
    ...over,
  };
}

/** A store whose transaction answers from `script`; records what was appended and whether it committed. */
function world(script: Partial<SiteSyncTransaction>) {
  const appended: OutboxEvent[][] = [];
  let committed = 0;
  const tx = {
    appendEvents: async (events: readonly OutboxEvent[]) => {
      appended.push([...events]);
    },
    ...script,
  } as SiteSyncTransaction;
  const store = {
    siteSyncTransaction: async <T>(fn: (t: SiteSyncTransaction) => Promise<T>) => {
      const out = await fn(tx);
      committed++;
      return out;
    },
  } as unknown as SiteSyncStore;
  const bus = new InProcessBus<RecordsBusTopics>(() => {});
  const emitted: StreamEvent[] = [];
  bus.subscribe('committed', (e) => emitted.push(e));
  return { sync: new SiteSync({ store, bus }), appended, emitted, committed: () => committed };
}

async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('claim', () => {
  it('answers each claimed state with its own lease; a lapsed-and-claimed state logs queued, then in_progress', async () => {
    const a = state({ status: 'in_progress', agent: 'box', attempts: 0 });
    const b = state({ status: 'in_progress', agent: 'box', attempts: 2 });
    const c = state({ status: 'queued', attempts: 4, error: LAPSE_ERROR });
    let digests: readonly Buffer[] = [];
    const w = world({
      claim: async (input) => {
        digests = input.leaseDigests;
        const moved: MovedState[] = [
          { state: a, lapsed: false, lapsedAgent: null, leaseIndex: 0 },
          { state: b, lapsed: true, lapsedAgent: 'old-box', leaseIndex: 1 },
          { state: c, lapsed: true, lapsedAgent: 'old-box', leaseIndex: null },
        ];
        return moved;
      },
    });
    const out = await w.sync.claim({ site: 'paris', agent: 'box', limit: 3 }, artist);
    expect(digests).toHaveLength(3);
    expect(out.map((x) => x.state)).toEqual([a, b]);
    expect(new Set(out.map((x) => x.lease)).size).toBe(2);
    const events = w.appended.flat().map((e) => e.payload);
    expect(events.map((e) => [e.entity_id, e.changes.status, e.actor, e.changes.agent])).toEqual([
      [a.representationId, 'in_progress', artist.principal!.userId, 'box'],
      [b.representationId, 'queued', null, 'old-box'],
      [b.representationId, 'in_progress', artist.principal!.userId, 'box'],
      [c.representationId, 'queued', null, null],
    ]);
    expect(w.emitted).toHaveLength(4);
  });

  it('answers in claim order (the lease indexes), whatever order the statement returned its rows in', async () => {
    const [a, b, c] = [state({ status: 'in_progress' }), state({ status: 'in_progress' }), state({ status: 'in_progress' })];
    const w = world({
      claim: async () => [
        { state: c, lapsed: false, lapsedAgent: null, leaseIndex: 2 },
        { state: a, lapsed: false, lapsedAgent: null, leaseIndex: 0 },
        { state: b, lapsed: false, lapsedAgent: null, leaseIndex: 1 },
      ],
    });
    const out = await w.sync.claim({ site: 'paris', agent: 'box', limit: 3 }, artist);
    expect(out.map((x) => x.state)).toEqual([a, b, c]);
  });

  it('nothing due: an empty answer, no event; an unknown site: 422 on site', async () => {
    const w = world({
      claim: async () => [],
      lockSite: async () => ({ id: newId(), code: 'paris', name: 'P', kind: 'studio', root: null, createdAt: '', updatedAt: '' }),
    });
    expect(await w.sync.claim({ site: 'paris', agent: 'box' }, artist)).toEqual([]);
    expect(w.appended.flat()).toEqual([]);
    const none = world({ claim: async () => [], lockSite: async () => undefined });
    expect((await failure(none.sync.claim({ site: 'nowhere', agent: 'box' }, artist))).problems?.[0]?.loc).toEqual(['site']);
  });

  it('a Viewer is refused before anything is validated or read', async () => {
    const w = world({});
    expect((await failure(w.sync.claim({ site: 'Not A Code', agent: '' }, viewer))).kind).toBe('forbidden');
    expect(w.committed()).toBe(0);
  });
});

describe('report', () => {
  const lease = `ssl_${'a'.repeat(43)}`;

  it('in_progress writes no event; synced and failed write one', async () => {
    for (const [status, events] of [
      ['in_progress', 0],
      ['synced', 1],
      ['failed', 1],
    ] as const) {
      const s = state({ status: status === 'failed' ? 'queued' : status, attempts: status === 'failed' ? 1 : 0 });
      let error: string | undefined;
      const w = world({
        report: async (change) => {
          error = change.error;
          return s;
        },
      });
      await w.sync.report({ representationId: s.representationId, site: 'paris', lease, status }, artist);
      expect(w.appended.flat(), status).toHaveLength(events);
      if (status === 'failed') expect(error).toBe('the agent reported a failure');
    }
  });

  it('not the current lease: a run-out lease is lapsed (committed, with its event), then 409 lease_lost; no state: 404', async () => {
    const s = state({ attempts: 1, error: LAPSE_ERROR });
    const w = world({ report: async () => undefined, findState: async () => state({ status: 'in_progress' }), lapse: async () => [s] });
    expect(await failure(w.sync.report({ representationId: s.representationId, site: 'paris', lease, status: 'synced' }, artist))).toMatchObject({
      kind: 'conflict',
      code: 'lease_lost',
    });
    expect(w.committed()).toBe(1);
    expect(w.appended.flat().map((e) => e.payload.changes)).toEqual([expect.objectContaining({ status: 'queued', attempts: 1, error: LAPSE_ERROR })]);
    const gone = world({ report: async () => undefined, findState: async () => undefined });
    expect((await failure(gone.sync.report({ representationId: newId(), site: 'paris', lease, status: 'synced' }, artist))).kind).toBe('not_found');
  });

  it('a token not shaped like a lease is never looked up: lease_lost', async () => {
    let asked = false;
    const w = world({
      report: async () => {
        asked = true;
        return state();
      },
      findState: async () => state({ status: 'in_progress' }),
      lapse: async () => [],
    });
    expect((await failure(w.sync.report({ representationId: newId(), site: 'paris', lease: 'guess', status: 'synced' }, artist))).code).toBe('lease_lost');
    expect(asked).toBe(false);
  });
});

describe('request and PATCH', () => {
  it('a request lists every unknown id and the unknown site in one 422, writing nothing', async () => {
    const known = newId();
    const w = world({ lockSite: async () => undefined, liveRepresentations: async () => [{ id: known, projectId: null }] });
    const err = await failure(w.sync.request({ representationIds: [known, newId(), newId()], site: 'nowhere' }, artist));
    expect(err.problems?.map((p) => p.loc)).toEqual([['site'], ['representation_ids', 1], ['representation_ids', 2]]);
    expect(w.appended).toEqual([]);
  });

  it('counts queued and unchanged over distinct ids; a new state is a create event, a re-queued one an update', async () => {
    const [x, y, z] = [newId(), newId(), newId()];
    let keep: readonly string[] = [];
    const w = world({
      lockSite: async () => ({ id: newId(), code: 'paris', name: 'P', kind: 'studio', root: null, createdAt: '', updatedAt: '' }),
      liveRepresentations: async (ids) => ids.map((id) => ({ id, projectId: null })),
      requestStates: async (_reps, _site, _priority, k) => {
        keep = k;
        return [
          { state: state({ representationId: x }), created: true },
          { state: state({ representationId: y }), created: false },
        ];
      },
    });
    expect(await w.sync.request({ representationIds: [x, y, z, z.toUpperCase()], site: 'paris' }, artist)).toEqual({ queued: 2, unchanged: 1 });
    expect([...keep].sort()).toEqual(['in_progress', 'queued', 'synced']);
    expect(w.appended.flat().map((e) => e.payload.action)).toEqual(['create', 'update']);
  });

  it('PATCH to the status and priority it has changes nothing and writes no event', async () => {
    const s = state({ status: 'paused', priority: 20 });
    let set = false;
    const w = world({
      findState: async () => s,
      setState: async () => {
        set = true;
        return s;
      },
    });
    expect(await w.sync.update({ representationId: s.representationId, site: 'paris', status: 'paused' }, artist)).toEqual(s);
    expect(set).toBe(false);
    expect(w.appended.flat()).toEqual([]);
  });
});

describe('the reader rule', () => {
  it("asks the store as the caller's user (membershipOf), and as nobody in particular for an Admin or a service", async () => {
    const admin: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
    const service: CallContext = { requestId: 'r', principal: { userId: '', role: 'Service', authKind: 'service' } };
    const readers: (string | null)[] = [];
    const w = world({
      claim: async (input) => (readers.push(input.reader), []),
      lockSite: async () => ({ id: newId(), code: 'paris', name: 'Paris', kind: 'remote', root: null, createdAt: '', updatedAt: '' }),
      report: async (change) => (readers.push(change.reader), undefined),
      findState: async (_key, reader) => (readers.push(reader), undefined),
      liveRepresentations: async (_ids, reader) => (readers.push(reader), []),
    });
    for (const ctx of [artist, admin, service]) {
      await w.sync.claim({ site: 'paris', agent: 'box' }, ctx);
      await failure(w.sync.report({ representationId: newId(), site: 'paris', lease: `ssl_${'a'.repeat(43)}`, status: 'in_progress' }, ctx));
      await failure(w.sync.update({ representationId: newId(), site: 'paris', status: 'paused' }, ctx));
      await failure(w.sync.request({ representationIds: [newId()], site: 'paris' }, ctx));
    }
    const userId = artist.principal!.userId;
    expect(readers).toEqual([userId, userId, userId, userId, userId, ...Array<null>(10).fill(null)]);
  });
});
