/**
 * The reader rule in site sync and sync (docs/api-notes.md, "Restricted projects") against the real
 * PostgreSQL through records' signed services: a caller who may not read a restricted project claims
 * none of its states (queued or lapsed) while a member and an Admin do, lists and counts none, finds
 * none to report on or change (404), and its representations are no live Representations to a
 * request (422, as an id that names nothing); the sync change feed and the mappings leave its
 * records out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, newId, type CallContext, type GrpcClient, type Role } from '@reelbase/lib-platform';
import { appErrorOf, TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import { sitesyncv1, syncv1 } from '@reelbase/proto';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { openAndSecret } from './readers.helper.js';

const as = (role: Role, userId: string = newId()): CallContext => ({ requestId: `r-${role}`, principal: { userId, role, authKind: 'token' } });
const admin = as('Admin');
const memberId = newId();
const member = as('Artist', memberId);
const outsider = as('Artist');

let world: RecordsWorld;
let ssClient: GrpcClient<sitesyncv1.SiteSyncServiceClient>;
let ss: GrpcClient<sitesyncv1.SiteSyncServiceClient>['call'];
let sync: GrpcClient<syncv1.SyncServiceClient>;
let open: string;
let secret: string;

beforeAll(async () => {
  world = await startRecordsWorld('readers_sitesync');
  const peer = { internalAuthSecret: TEST_INTERNAL_AUTH_SECRET, address: `127.0.0.1:${world.running.grpcPort}` };
  ssClient = createGrpcClient(sitesyncv1.SiteSyncServiceClient, sitesyncv1.SiteSyncServiceService, { ...peer, name: 'sitesync-test' });
  ss = ssClient.call;
  sync = createGrpcClient(syncv1.SyncServiceClient, syncv1.SyncServiceService, { ...peer, name: 'sync-test' });
  ({ open, secret } = await openAndSecret(world, [memberId], admin));
});

afterAll(async () => {
  ssClient?.close();
  sync?.close();
  await world?.stop();
});

async function reps(projectId: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await world.client.call.createRecord({ entityType: 'Representation', projectId, dataJson: JSON.stringify({ name: `r${i}` }) }, admin);
    out.push(r.record!.id);
  }
  return out;
}

let siteN = 0;
/** A site with `open` and `hidden` representations queued on it (by an Admin). */
async function site(openReps: string[], hiddenReps: string[], priority = { open: 10, hidden: 90 }): Promise<string> {
  const code = `site-${++siteN}`;
  await ss.putSite({ code, name: code, kind: 'remote' }, admin);
  if (openReps.length) await ss.requestSync({ representationIds: openReps, site: code, priority: priority.open }, admin);
  if (hiddenReps.length) await ss.requestSync({ representationIds: hiddenReps, site: code, priority: priority.hidden }, admin);
  return code;
}

const claim = (site: string, ctx: CallContext, limit = 10) => ss.claimStates({ site, agent: 'a', limit, leaseSeconds: 0 }, ctx);
const ids = (items: { state?: sitesyncv1.SiteState }[]) => items.map((i) => i.state!.representationId).sort();

describe('site sync', () => {
  it('a non-member claims only the states of projects they may read, whatever the priority; a member and an Admin claim the others', async () => {
    const [o1, o2] = await reps(open, 2);
    const hidden = await reps(secret, 3);
    const code = await site([o1!, o2!], hidden);
    expect(ids((await claim(code, outsider)).items)).toEqual([o1, o2].sort());
    expect((await claim(code, outsider)).items).toEqual([]);
    expect(ids((await claim(code, member, 2)).items)).toEqual(hidden.slice(0, 2).sort());
    expect(ids((await claim(code, admin)).items)).toEqual([hidden[2]]);
  });

  it('a lapsed lease of a hidden state is left to those who may read it: the member claims it again with the attempt counted', async () => {
    const [rep] = await reps(secret, 1);
    const code = await site([], [rep!]);
    await claim(code, member);
    await world.sql.query(`update records.sitesync_state set lease_expires_at = clock_timestamp() - interval '1 second' where representation_id = $1`, [rep]);
    expect((await claim(code, outsider)).items).toEqual([]);
    const again = (await claim(code, member)).items;
    expect(again.map((i) => [i.state!.representationId, i.state!.attempts])).toEqual([[rep, 1]]);
  });

  it('lists and counts leave hidden states out, filtered by that project or not', async () => {
    const [o] = await reps(open, 1);
    const hidden = await reps(secret, 2);
    const code = await site([o!], hidden);
    const listed = async (ctx: CallContext, projectId?: string) =>
      (await ss.listStates({ site: code, projectId, limit: 100 }, ctx)).items.map((s) => s.representationId).sort();
    expect(await listed(outsider)).toEqual([o]);
    expect(await listed(outsider, secret)).toEqual([]);
    expect(await listed(member)).toEqual([o!, ...hidden].sort());
    expect(await listed(admin, secret)).toEqual([...hidden].sort());
    expect((await ss.listStates({ representationId: hidden[0], limit: 10 }, outsider)).items).toEqual([]);
    const counts = async (ctx: CallContext) => Object.fromEntries((await ss.summarizeStates({ site: code }, ctx)).counts.map((c) => [c.status, c.count]));
    expect((await counts(outsider)).queued).toBe(1);
    expect((await counts(member)).queued).toBe(3);
    expect((await ss.summarizeStates({ projectId: secret, site: code }, outsider)).counts.every((c) => c.count === 0)).toBe(true);
  });

  it("reports and changes of a hidden state are 404 (not lease_lost) for a non-member; the member's agent goes on", async () => {
    const [rep] = await reps(secret, 1);
    const code = await site([], [rep!]);
    const [held] = (await claim(code, member)).items;
    const report = { representationId: rep!, site: code, lease: held!.lease, status: 'in_progress', progress: 0.5 };
    for (const refused of [
      await appErrorOf(ss.reportState(report, outsider)),
      await appErrorOf(ss.reportState({ ...report, lease: 'ssl_wrong' }, outsider)),
      await appErrorOf(ss.updateState({ representationId: rep!, site: code, status: 'paused' }, as('Supervisor'))),
    ]) {
      expect([refused.kind, refused.message]).toEqual(['not_found', 'this representation has no sync state on this site']);
    }
    expect((await ss.reportState(report, member)).state!.progress).toBe(0.5);
    expect((await appErrorOf(ss.reportState({ ...report, lease: 'ssl_wrong' }, member))).code).toBe('lease_lost');
    expect((await ss.reportState({ ...report, status: 'synced' }, member)).state!.status).toBe('synced');
    expect((await ss.updateState({ representationId: rep!, site: code, status: 'removed' }, member)).state!.status).toBe('removed');
  });

  it('a request naming a hidden representation is 422 at its index, as for an id that names nothing, and queues nothing', async () => {
    const [o] = await reps(open, 1);
    const [h] = await reps(secret, 1);
    const code = await site([], []);
    const refused = await appErrorOf(ss.requestSync({ representationIds: [o!, h!, newId()], site: code, priority: 50 }, outsider));
    expect(refused.kind).toBe('invalid');
    expect(refused.problems.map((p) => [p.loc.join('.'), p.msg, p.type])).toEqual([
      ['representation_ids.1', 'no live Representation with this id', 'not_found'],
      ['representation_ids.2', 'no live Representation with this id', 'not_found'],
    ]);
    expect((await ss.listStates({ site: code, limit: 10 }, admin)).items).toEqual([]);
    expect(await ss.requestSync({ representationIds: [o!, h!], site: code, priority: 50 }, member)).toEqual({ queued: 2, unchanged: 0 });
  });
});

describe('sync', () => {
  it('the change feed shows a non-member no record of a restricted project (nor the project itself); the member sees them', async () => {
    const [o] = await reps(open, 1);
    const [h] = await reps(secret, 1);
    const at = new Date().toISOString();
    const events = [o!, h!, secret, open].map((entityId, k) => ({ eventId: k + 1, entityId, createdAt: at }));
    const seen = async (ctx: CallContext) =>
      (JSON.parse((await sync.call.changes({ events }, ctx)).json) as { items: { event_id: number; is_record: boolean; record: unknown }[] }).items
        .filter((i) => i.is_record && i.record !== null)
        .map((i) => i.event_id);
    expect(await seen(outsider)).toEqual([1, 4]);
    expect(await seen(member)).toEqual([1, 2, 3, 4]);
    expect(await seen(admin)).toEqual([1, 2, 3, 4]);
  });

  it("mappings leave out a restricted project's records for a non-member", async () => {
    const [o] = await reps(open, 1);
    const [h] = await reps(secret, 1);
    await world.sql.query(
      `insert into records.sync_mapping (source, entity_type, external_id, id) values ('sg', 'Representation', 'o', $1), ('sg', 'Representation', 'h', $2)`,
      [o, h],
    );
    const mapped = async (q: syncv1.SyncServiceMappingsRequest, ctx: CallContext) =>
      (JSON.parse((await sync.call.mappings(q, ctx)).json) as { items: { external_id: string }[] }).items.map((m) => m.external_id);
    expect(await mapped({ source: 'sg' }, outsider)).toEqual(['o']);
    expect(await mapped({ id: h }, outsider)).toEqual([]);
    expect(await mapped({ source: 'sg', entityType: 'Representation', externalId: 'h' }, outsider)).toEqual([]);
    expect(await mapped({ source: 'sg' }, member)).toEqual(['h', 'o']);
    expect(await mapped({ id: h }, admin)).toEqual(['h']);
  });
});
