import { createLogger, type Principal } from '@reelbase/lib-platform';
import { afterEach, describe, expect, it } from 'vitest';
import { createGatewayBus, projectChangesOf } from '../live/gateway.bus.js';
import type { RestrictedProjectEntry } from './ports.js';
import { ProjectAccess, readsEveryProject } from './project.access.js';

const P = '0190a0b0-0000-7000-8000-0000000000a1';
const Q = '0190a0b0-0000-7000-8000-0000000000b2';
const ANA = '0190a0b0-0000-7000-8000-000000000011';
const BEN = '0190a0b0-0000-7000-8000-000000000012';

const user = (userId: string, role = 'Artist', authKind: Principal['authKind'] = 'token'): Principal => ({ userId, role: role as Principal['role'], authKind });
const admin = user('0190a0b0-0000-7000-8000-000000000001', 'Admin');
const service: Principal = { userId: '', role: 'Service', authKind: 'service' };
const guest: Principal = { userId: '', role: 'Guest', authKind: 'guest' };

/** A source whose answers the test controls: `next` answers the next read, `gate` holds it until released. */
function source(initial: RestrictedProjectEntry[] = []) {
  const s = {
    projects: initial,
    fail: false,
    reads: 0,
    inFlight: 0,
    maxInFlight: 0,
    gate: null as Promise<void> | null,
    read: async () => {
      s.reads++;
      s.inFlight++;
      s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
      try {
        const answer = s.projects.map((p) => ({ ...p }));
        if (s.gate) await s.gate;
        if (s.fail) throw new Error('records is down');
        return answer;
      } finally {
        s.inFlight--;
      }
    },
  };
  return s;
}

/** A gate the test opens. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

const started: ProjectAccess[] = [];
afterEach(async () => {
  for (const a of started.splice(0)) await a.stop();
});

describe('readsEveryProject', () => {
  it('is true for Admins, services and guests, false for every other role and for API keys of them', () => {
    expect([admin, service, guest].map(readsEveryProject)).toEqual([true, true, true]);
    expect(readsEveryProject({ userId: ANA, role: 'Supervisor', authKind: 'service' })).toBe(true);
    for (const role of ['Supervisor', 'Coordinator', 'Artist', 'Viewer']) expect(readsEveryProject(user(ANA, role))).toBe(false);
    expect(readsEveryProject(user(ANA, 'Artist', 'api_key'))).toBe(false);
  });
});

describe('ProjectAccess', () => {
  it('hides a restricted project from everyone but its members and those who read every project', async () => {
    const s = source([{ id: P.toUpperCase(), memberIds: [ANA] }]);
    const access = new ProjectAccess(s.read);
    await access.refresh();
    expect([...access.hiddenFor(user(BEN))]).toEqual([P]);
    expect([...access.hiddenFor(user(BEN, 'Viewer', 'api_key'))]).toEqual([P]);
    expect(access.hiddenFor(user(ANA)).size).toBe(0);
    for (const p of [admin, service, guest]) expect(access.hiddenFor(p).size).toBe(0);
    expect(access.readable(user(BEN), P)).toBe(false);
    expect(access.readable(user(BEN), P.toUpperCase())).toBe(false);
    expect(access.readable(user(ANA), P)).toBe(true);
    expect(access.readable(user(BEN), Q)).toBe(true);
    expect(access.readable(user(BEN), null)).toBe(true);
    expect(() => access.assertReadable(user(BEN), P)).toThrow(expect.objectContaining({ kind: 'not_found' }));
    expect(() => access.assertReadable(user(BEN), undefined)).not.toThrow();
  });

  it('is unknown until read: 503 for callers it would filter, nothing for those who read every project', async () => {
    const s = source();
    s.fail = true;
    const access = new ProjectAccess(s.read);
    await access.refresh();
    expect(access.known).toBe(false);
    expect(() => access.hiddenFor(user(ANA))).toThrow(expect.objectContaining({ kind: 'unavailable' }));
    expect(() => access.readable(user(ANA), P)).toThrow(expect.objectContaining({ kind: 'unavailable' }));
    expect(access.readable(user(ANA), null)).toBe(true);
    expect(access.hiddenFor(admin).size).toBe(0);
  });

  it('reads again every retry interval while unknown, and once known every refresh interval', async () => {
    const s = source([{ id: P, memberIds: [] }]);
    s.fail = true;
    const access = new ProjectAccess(s.read, () => {}, { retryMs: 20, refreshMs: 60_000 });
    started.push(access);
    await access.refresh();
    access.start();
    await new Promise((r) => setTimeout(r, 70));
    expect(access.known).toBe(false);
    s.fail = false;
    await until(() => access.known);
    expect(access.readable(user(ANA), P)).toBe(false);
    const reads = s.reads;
    await new Promise((r) => setTimeout(r, 100));
    expect(s.reads).toBe(reads);
  });

  it('coalesces reads: one in flight, one more after it for every ask meanwhile, each ask answered by a read begun after it', async () => {
    const s = source();
    const access = new ProjectAccess(s.read);
    const g = gate();
    s.gate = g.promise;
    const first = access.refresh();
    s.projects = [{ id: P, memberIds: [] }];
    const asks = [access.refresh(), access.refresh(true), access.refresh()];
    let settled = 0;
    for (const a of asks) void a.then(() => settled++);
    s.gate = null;
    g.open();
    await first;
    await Promise.all(asks);
    expect(settled).toBe(3);
    expect(s.reads).toBe(2);
    expect(s.maxInFlight).toBe(1);
    // The second read saw what changed after the first began.
    expect(access.readable(user(ANA), P)).toBe(false);
  });

  it('applies a Project event at once, tells its listeners, then reads again', async () => {
    const s = source();
    const access = new ProjectAccess(s.read);
    await access.refresh();
    let told = 0;
    access.subscribe(() => told++);
    const g = gate();
    s.gate = g.promise;
    s.projects = [{ id: P, memberIds: [ANA] }];
    const reread = access.projectChanged({ projectId: P, action: 'update', changes: { restricted: true, members: [{ type: 'User', id: ANA }] } });
    // Before the read that follows has answered:
    expect(told).toBe(1);
    expect(access.readable(user(BEN), P)).toBe(false);
    expect(access.readable(user(ANA), P)).toBe(true);
    g.open();
    await reread;
    expect(s.reads).toBe(2);
    expect(told).toBe(1); // the read found what the event said: nothing changed
  });

  it('reads a project restricted without naming its members as having none until the read says who they are', async () => {
    const s = source();
    const access = new ProjectAccess(s.read);
    await access.refresh();
    const g = gate();
    s.gate = g.promise;
    s.projects = [{ id: P, memberIds: [ANA] }];
    const reread = access.projectChanged({ projectId: P, action: 'update', changes: { restricted: true } });
    expect(access.readable(user(ANA), P)).toBe(false);
    g.open();
    await reread;
    expect(access.readable(user(ANA), P)).toBe(true);
    expect(access.readable(user(BEN), P)).toBe(false);
  });

  it('removes a member and opens a project from the event alone; other fields change nothing', async () => {
    const s = source([{ id: P, memberIds: [ANA, BEN] }]);
    const access = new ProjectAccess(s.read);
    await access.refresh();
    s.gate = new Promise(() => {}); // the reads that follow never answer: only the events decide
    void access.projectChanged({ projectId: P, action: 'update', changes: { members: [{ type: 'User', id: ANA }] } });
    expect(access.readable(user(BEN), P)).toBe(false);
    void access.projectChanged({ projectId: P, action: 'update', changes: { name: 'renamed' } });
    expect(access.readable(user(BEN), P)).toBe(false);
    void access.projectChanged({ projectId: Q, action: 'update', changes: { members: [] } });
    expect(access.readable(user(BEN), Q)).toBe(true);
    void access.projectChanged({ projectId: P, action: 'update', changes: { restricted: false } });
    expect(access.readable(user(BEN), P)).toBe(true);
  });

  it('never lets a read that began before an event undo it', async () => {
    const s = source([{ id: P, memberIds: [ANA, BEN] }]);
    const access = new ProjectAccess(s.read);
    await access.refresh();
    const g = gate();
    s.gate = g.promise;
    const stale = access.refresh(); // reads BEN as a member
    s.projects = [{ id: P, memberIds: [ANA] }];
    void access.projectChanged({ projectId: P, action: 'update', changes: { members: [{ type: 'User', id: ANA }] } });
    s.gate = null;
    g.open();
    await stale;
    expect(access.readable(user(BEN), P)).toBe(false);
    await access.refresh();
    expect(access.readable(user(BEN), P)).toBe(false);
    expect(access.readable(user(ANA), P)).toBe(true);
  });

  it('is unknown after a failed read asked for by a change; a failed periodic read keeps the map', async () => {
    const s = source([{ id: P, memberIds: [ANA] }]);
    const access = new ProjectAccess(s.read);
    await access.refresh();
    s.fail = true;
    await access.refresh();
    expect(access.known).toBe(true);
    expect(access.readable(user(BEN), P)).toBe(false);
    let told = 0;
    access.subscribe(() => told++);
    await access.refresh(true);
    expect(access.known).toBe(false);
    expect(told).toBe(1);
    s.fail = false;
    await access.refresh();
    expect(access.known).toBe(true);
    expect(access.readable(user(ANA), P)).toBe(true);
  });

  it('follows the Project rows of the gateway bus', async () => {
    const s = source();
    const access = new ProjectAccess(s.read);
    await access.refresh();
    s.projects = [{ id: P, memberIds: [] }];
    const bus = createGatewayBus(createLogger('test', 'silent'));
    const off = access.subscribeTo(projectChangesOf(bus));
    const row = (entityType: string, changes: Record<string, unknown>) => ({
      row: { id: 1, entity_type: entityType, entity_id: P, project_id: P, action: 'update' as const, actor: null, changes, created_at: '' },
      text: '',
    });
    bus.emit('event', row('Shot', { restricted: true }));
    expect(access.readable(user(ANA), P)).toBe(true);
    bus.emit('event', row('Project', { restricted: true }));
    expect(access.readable(user(ANA), P)).toBe(false);
    off();
    bus.emit('event', row('Project', { restricted: false }));
    expect(access.readable(user(ANA), P)).toBe(false);
  });
});

async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
