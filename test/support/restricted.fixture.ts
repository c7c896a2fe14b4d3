/**
 * The world the restricted-project specs share (docs/api-notes.md, "Restricted projects"): a whole
 * stack, its Admin, two Artists — `member` listed in the restricted project's `members`, `outsider`
 * not — and two Coordinators (`coordMember` listed, `coordOutsider` not); an open project and a
 * restricted one holding the same kinds of records (Sequence, Shot, Task assigned to both Artists,
 * Version, Representation, Note on the Shot, Playlist, a TimeLog of the outsider, a FarmJob, a
 * site-sync state), and two records that link across them. Each spec file builds it once; its tests
 * only read it and write records of their own, so they hold in any order.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { expectStatus, type Api, type ApiResponse } from './api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './e2e.stack.js';
import { expectError } from './expect.helpers.js';

/** An id no record has (UUID v7 layout). */
export const MISSING_ID = '0190a0b0-0000-7000-8000-0000000000ff';

/** The day the world's TimeLogs are logged on, and a timesheet range around it. */
export const LOG_DATE = '2026-01-05';
export const SHEET_RANGE = 'from=2026-01-01&to=2026-01-31';

/** The site every world state is on. */
export const WORLD_SITE = 'world';

/** Fast notifications (the notifier follows the log every 200 ms), as the notifier spec runs it. */
const WORLD_ENV = { notifier: { NOTIFIER_POLL_MS: '200' } };

export interface ProjectRecords {
  project: any;
  sequence: any;
  shot: any;
  /** Assigned to `member` and `outsider`. */
  task: any;
  version: any;
  representation: any;
  /** Written by the Admin, linking the project's Shot. */
  note: any;
  playlist: any;
  /** The outsider's time (in the restricted project written by the Admin). */
  timeLog: any;
  /** In pool `world-<code>`, never claimed by a test. */
  farmJob: any;
}

export interface RestrictedWorld {
  e: E2EStack;
  admin: Session;
  /** Artist listed in the restricted project's members. */
  member: Session;
  /** Artist not listed. */
  outsider: Session;
  /** Coordinator listed. */
  coordMember: Session;
  /** Coordinator not listed. */
  coordOutsider: Session;
  open: ProjectRecords;
  restricted: ProjectRecords;
  /** A Shot of the open project whose `sequence` is the restricted project's Sequence. */
  crossShot: any;
  /** A Note of the restricted project linking the open project's Shot. */
  crossNote: any;
  /** Every id in the restricted project, the Project's own included. */
  hiddenIds: Set<string>;
}

export const link = (r: any) => ({ type: r.entity_type as string, id: r.id as string });
export const userLink = (s: Session) => ({ type: 'User', id: s.user.id as string });
export const idsOf = (items: any[]): string[] => items.map((r) => r.id as string);

export async function create(api: Api, type: string, body: unknown): Promise<any> {
  return expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
}

/** The answer a non-reader gets for anything in a project they may not read: 404 `not_found`. */
export function expectHidden(res: ApiResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(404);
  expectError(res, 404, 'not_found');
}

/** What of an answer shows which check refused it: the status and the code, or each 422 entry's loc and type. */
function refusal(res: ApiResponse): unknown {
  const detail = res.body?.detail;
  if (Array.isArray(detail)) return { status: res.status, problems: detail.map((d: any) => ({ loc: d.loc, type: d.type })) };
  return { status: res.status, code: res.body?.code, index: res.body?.index };
}

/** `hidden` is answered exactly as `missing` (the same request naming an id nobody has): nothing leaks. */
export function expectLikeMissing(hidden: ApiResponse, missing: ApiResponse, what: string): void {
  expect(missing.status, `${what} (missing id): ${missing.text}`).toBeGreaterThanOrEqual(400);
  expect(refusal(hidden), `${what}: ${hidden.text}`).toEqual(refusal(missing));
}

/** True for an event of the restricted project (its `project_id`, or a record of it by id). */
export function isHiddenEvent(w: RestrictedWorld, ev: any): boolean {
  return ev.project_id === w.restricted.project.id || w.hiddenIds.has(ev.entity_id);
}

/** A fresh Shot of the open project written by the Admin: an event every reader receives after all before it. */
export async function barrierShot(w: RestrictedWorld, tag: string): Promise<any> {
  return create(w.admin.api, 'Shot', { project_id: w.open.project.id, data: { code: `barrier-${tag}` } });
}

let farmPool = 0;

async function projectRecords(
  w: Pick<RestrictedWorld, 'admin' | 'member' | 'outsider'>,
  project: any,
  writer: Session,
  /** Runs once the project's Shot and Task exist, before its Note (the project's last write). */
  beforeNote?: (shot: any) => Promise<void>,
): Promise<ProjectRecords> {
  const admin = w.admin.api;
  const pid = project.id as string;
  const code = project.data.code as string;
  const sequence = await create(admin, 'Sequence', { project_id: pid, data: { code: `${code}-sq01` } });
  const shot = await create(admin, 'Shot', { project_id: pid, data: { code: `${code}-sh010`, sequence: link(sequence) } });
  const task = await create(admin, 'Task', {
    project_id: pid,
    data: { name: `world ${code} comp`, entity: link(shot), assignees: [userLink(w.member), userLink(w.outsider)] },
  });
  const version = await create(admin, 'Version', { project_id: pid, data: { code: `${code}-sh010_comp_v001`, entity: link(shot), task: link(task) } });
  const representation = await create(admin, 'Representation', { project_id: pid, data: { name: `${code}-exr`, version: link(version) } });
  const playlist = await create(admin, 'Playlist', { project_id: pid, data: { name: `${code} dailies`, versions: [link(version)] } });
  const timeLog = await create(writer.api, 'TimeLog', {
    project_id: pid,
    data: { user: userLink(w.outsider), task: link(task), date: LOG_DATE, minutes: writer === w.outsider ? 30 : 60, description: `world ${code}` },
  });
  const farmJob = expectStatus(
    await admin.post('/farm/jobs', { project_id: pid, name: `world ${code}`, kind: 'render', pool: `world-${code}-${++farmPool}`, frames: '1-20' }),
    200,
    'POST /farm/jobs',
  );
  await beforeNote?.(shot);
  const note = await create(admin, 'Note', { project_id: pid, data: { subject: `world ${code}`, content: 'tighten the matte', links: [link(shot)] } });
  return { project, sequence, shot, task, version, representation, note, playlist, timeLog, farmJob };
}

/** Builds the world on a started stack (see the file's comment). */
export async function buildWorld(e: E2EStack): Promise<RestrictedWorld> {
  const admin = await bootstrapAdmin(e.api);
  const member = await createUser(admin.api, 'Artist', 'mia.member@studio.test');
  const outsider = await createUser(admin.api, 'Artist', 'ned.outsider@studio.test');
  const coordMember = await createUser(admin.api, 'Coordinator', 'kim.member@studio.test');
  const coordOutsider = await createUser(admin.api, 'Coordinator', 'cal.outsider@studio.test');
  const base = { admin, member, outsider };
  const openProject = await create(admin.api, 'Project', { data: { name: 'Open show', code: 'open' } });
  const restrictedProject = await create(admin.api, 'Project', {
    data: { name: 'Secret show', code: 'secret', restricted: true, members: [userLink(member), userLink(coordMember)] },
  });
  expect(restrictedProject.data).toMatchObject({ restricted: true, members: [userLink(member), userLink(coordMember)] });

  // The restricted project first, so the open project's last write (its Note) follows every one of
  // its writes in the log: a reader who has seen that Note's event or notification has seen them all.
  const restricted = await projectRecords(base, restrictedProject, admin);
  let crossNote: any;
  // The open Shot's Task exists (assigned to both Artists) when the restricted Note links the Shot.
  const open = await projectRecords(base, openProject, outsider, async (openShot) => {
    crossNote = await create(admin.api, 'Note', {
      project_id: restrictedProject.id,
      data: { subject: 'secret note on an open shot', content: 'matches the secret sequence', links: [link(openShot)] },
    });
  });
  const crossShot = await create(admin.api, 'Shot', {
    project_id: openProject.id,
    data: { code: 'open-sh900', sequence: link(restricted.sequence) },
  });

  expectStatus(await admin.api.call('PUT', `/sitesync/sites/${WORLD_SITE}`, { body: { name: 'World', kind: 'remote' } }), 200, 'PUT site');
  expect(
    expectStatus(
      await admin.api.post('/sitesync/requests', { representation_ids: [restricted.representation.id, open.representation.id], site: WORLD_SITE }),
      200,
      'POST /sitesync/requests',
    ),
  ).toEqual({ queued: 2, unchanged: 0 });

  const hiddenIds = new Set<string>([restrictedProject.id, crossNote.id]);
  for (const r of Object.values(restricted)) hiddenIds.add(r.id as string);
  return { e, admin, member, outsider, coordMember, coordOutsider, open, restricted, crossShot, crossNote, hiddenIds };
}

/**
 * The hooks of a spec: the stack started and the world built before its tests (handed to
 * `started`), torn down after them.
 */
export function useRestrictedWorld(name: string, started: (w: RestrictedWorld) => void, env: Record<string, Record<string, string>> = {}): void {
  let e: E2EStack | undefined;
  beforeAll(async () => {
    e = await startE2EStack(name, { ...WORLD_ENV, ...env, notifier: { ...WORLD_ENV.notifier, ...env.notifier } });
    started(await buildWorld(e));
  }, 240_000);
  afterAll(async () => {
    await e?.teardown();
  });
}
