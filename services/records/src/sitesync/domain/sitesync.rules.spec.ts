import { describe, expect, it } from 'vitest';
import { isAppError, newId, type Principal } from '@reelbase/lib-platform';
import {
  assertPatchTransition,
  assertReader,
  assertSiteAdmin,
  assertWriter,
  checkClaim,
  checkFilter,
  checkPatch,
  checkReport,
  checkRequest,
  checkSite,
  decodeCursor,
  encodeCursor,
  isLeaseToken,
  leaseDigest,
  newLease,
  pageLimit,
  REQUEST_KEEPS,
  stateEvent,
} from './sitesync.rules.js';
import { STATE_STATUSES, type SiteState } from './sitesync.types.js';

const who = (role: Principal['role']): Principal => ({ userId: newId(), role, authKind: role === 'Guest' ? 'guest' : 'token' });

function thrown(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
  throw new Error('expected an error');
}

describe('roles', () => {
  it('sites: Admin (and services); writes: anyone but Viewer and guests; reads: anyone signed in', () => {
    expect(() => assertSiteAdmin(who('Admin'))).not.toThrow();
    expect(() => assertSiteAdmin(who('Service'))).not.toThrow();
    for (const r of ['Supervisor', 'Coordinator', 'Artist', 'Viewer'] as const) expect(thrown(() => assertSiteAdmin(who(r))).kind).toBe('forbidden');
    for (const r of ['Admin', 'Supervisor', 'Coordinator', 'Artist', 'Service'] as const) expect(() => assertWriter(who(r))).not.toThrow();
    expect(thrown(() => assertWriter(who('Viewer'))).kind).toBe('forbidden');
    expect(thrown(() => assertWriter(who('Guest'))).kind).toBe('forbidden');
    expect(thrown(() => assertWriter(undefined)).kind).toBe('forbidden');
    expect(() => assertReader(who('Viewer'))).not.toThrow();
    expect(thrown(() => assertReader(who('Guest'))).kind).toBe('forbidden');
  });
});

describe('bodies', () => {
  it('a site: code pattern, a name, a known kind, a bounded root; every problem at once', () => {
    expect(() => checkSite({ code: 'paris_01', name: 'Paris', kind: 'studio', root: '/mnt' })).not.toThrow();
    const err = thrown(() => checkSite({ code: '-Paris', name: '', kind: 'moon', root: 'x'.repeat(5000) }));
    expect(err.problems?.map((p) => p.loc)).toEqual([['code'], ['name'], ['kind'], ['root']]);
  });

  it('a request: 1..1000 UUIDs (lower-cased, repeats dropped), a site code, priority 0..100', () => {
    const id = newId();
    expect(checkRequest({ representationIds: [id, id.toUpperCase()], site: 'paris', priority: 0 })).toEqual([id]);
    expect(checkRequest({ representationIds: [id], site: 'paris', priority: 100 })).toEqual([id]);
    const err = thrown(() => checkRequest({ representationIds: [id, 'nope'], site: 'Paris!', priority: 101 }));
    expect(err.problems?.map((p) => p.loc)).toEqual([['representation_ids', 1], ['site'], ['priority']]);
    expect(thrown(() => checkRequest({ representationIds: [], site: 'paris', priority: 50 })).problems?.[0]?.loc).toEqual(['representation_ids']);
    const many = Array.from({ length: 1001 }, newId);
    expect(thrown(() => checkRequest({ representationIds: many, site: 'paris', priority: 50 })).problems?.[0]?.loc).toEqual(['representation_ids']);
  });

  it('a claim: agent, limit 1..100, lease_seconds 10..3600', () => {
    expect(() => checkClaim({ site: 'paris', agent: 'box-1', limit: 1, leaseSeconds: 10 })).not.toThrow();
    expect(() => checkClaim({ site: 'paris', agent: 'box-1', limit: 100, leaseSeconds: 3600 })).not.toThrow();
    const err = thrown(() => checkClaim({ site: 'paris', agent: '', limit: 0, leaseSeconds: 3601 }));
    expect(err.problems?.map((p) => p.loc)).toEqual([['agent'], ['limit'], ['lease_seconds']]);
  });

  it('a report: in_progress, synced or failed; progress 0..1; sizes whole and not negative', () => {
    expect(checkReport({ representationId: newId(), site: 's', lease: 'l', status: 'synced', progress: 1, size: 0 })).toBe('synced');
    const err = thrown(() => checkReport({ representationId: newId(), site: 's', lease: '', status: 'queued', progress: 1.5, size: -1, totalSize: 1.5 }));
    expect(err.problems?.map((p) => p.loc)).toEqual([['lease'], ['status'], ['progress'], ['size'], ['total_size']]);
  });

  it('a PATCH: paused, queued or removed, priority 0..100', () => {
    expect(checkPatch({ status: 'paused', priority: 0 })).toBe('paused');
    expect(thrown(() => checkPatch({ status: 'synced', priority: -1 })).problems?.map((p) => p.loc)).toEqual([['status'], ['priority']]);
  });

  it('filters and page limits', () => {
    expect(() => checkFilter({ projectId: newId(), site: 'paris', status: 'failed', representationId: newId() })).not.toThrow();
    expect(thrown(() => checkFilter({ projectId: 'x', site: 'P', status: 'done', representationId: 'y' })).problems).toHaveLength(4);
    expect(pageLimit(undefined)).toBe(100);
    expect(pageLimit(1000)).toBe(1000);
    expect(thrown(() => pageLimit(1001)).problems?.[0]?.loc).toEqual(['limit']);
  });
});

describe('the state machine', () => {
  it('PATCH: queued and removed from anything, paused only from queued or in_progress (or paused)', () => {
    for (const from of STATE_STATUSES) {
      expect(() => assertPatchTransition(from, 'queued')).not.toThrow();
      expect(() => assertPatchTransition(from, 'removed')).not.toThrow();
    }
    for (const from of ['queued', 'in_progress', 'paused'] as const) expect(() => assertPatchTransition(from, 'paused')).not.toThrow();
    for (const from of ['synced', 'failed', 'removed'] as const) {
      expect(thrown(() => assertPatchTransition(from, 'paused'))).toMatchObject({ kind: 'conflict', code: 'transition_not_allowed' });
    }
  });

  it('a request leaves queued, in_progress and synced states alone', () => {
    expect([...REQUEST_KEEPS].sort()).toEqual(['in_progress', 'queued', 'synced']);
  });
});

describe('cursors, leases and events', () => {
  it('a cursor round-trips and anything else is 422 on cursor', () => {
    const key = { representationId: newId(), site: 'paris' };
    expect(decodeCursor(encodeCursor(key))).toEqual(key);
    for (const bad of ['', 'nope', Buffer.from('[1,2]').toString('base64url'), Buffer.from(JSON.stringify(['x', 'paris'])).toString('base64url')]) {
      expect(thrown(() => decodeCursor(bad)).problems?.[0]?.loc).toEqual(['cursor']);
    }
  });

  it('a lease has 256 random bits and is kept as its SHA-256 digest', () => {
    const a = newLease();
    const b = newLease();
    expect(a.token).not.toBe(b.token);
    expect(isLeaseToken(a.token)).toBe(true);
    expect(isLeaseToken('ssl_short')).toBe(false);
    expect(a.digest).toEqual(leaseDigest(a.token));
    expect(a.digest.length).toBe(32);
  });

  it('a state event names the representation, its project and the site with what moved', () => {
    const s: SiteState = {
      representationId: newId(),
      site: 'paris',
      projectId: newId(),
      status: 'in_progress',
      priority: 60,
      progress: 0,
      size: null,
      totalSize: null,
      attempts: 1,
      error: null,
      agent: 'box-1',
      leaseExpiresAt: '2026-01-01T00:00:00.000000Z',
      updatedAt: '2026-01-01T00:00:00.000000Z',
    };
    const p = who('Artist');
    const id = newId();
    expect(stateEvent(id, s, 'update', p)).toEqual({
      event_id: id,
      entity_type: 'SiteSync',
      entity_id: s.representationId,
      project_id: s.projectId,
      action: 'update',
      actor: p.userId,
      changes: { site: 'paris', status: 'in_progress', priority: 60, attempts: 1, agent: 'box-1', error: null },
      occurred_at: s.updatedAt,
    });
  });
});
