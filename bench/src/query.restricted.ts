/**
 * The restricted-projects shape of bench:query (bench/README.md, "Queries on 1,000,000 records";
 * docs/api-notes.md, "Restricted projects"): every Project of the seeded table is made restricted
 * through the API, an Artist is listed in the `members` of 5 of them, and the same Task queries are
 * timed through the gateway as that Artist and as the Admin, in alternating blocks of 50 samples:
 *   (r1) status `ip`, limit 50, no project filter: the Artist's first page is found among every
 *        project's Tasks, nine in ten of them hidden;
 *   (r2) project (one the Artist is a member of) + status `ip`, limit 50.
 * Target: the Artist's p50 and p95 each ≤ 1.2× the Admin's (the reader rule costs a caller who is
 * a member of few projects no more than that). Each Artist page is checked too: full, and only of
 * projects the Artist is listed in.
 */
import type pg from 'pg';
import { call, LeanClient } from './http.client.js';
import { alternate, pcts, type Pcts } from './stats.js';

export const TARGET_RESTRICTED_RATIO = 1.2;
/** Projects the Artist is a member of (of every seeded one). */
export const MEMBER_PROJECTS = 5;

export interface RestrictedOptions {
  url: string;
  /** An Admin's API key (the bench user's). */
  adminKey: string;
  sql: pg.Client;
  iterations: number;
  log: (msg: string) => void;
}

export interface RestrictedShapeResult {
  key: string;
  title: string;
  body: unknown;
  matched: { artist: number; admin: number };
  artist_ms: Pcts;
  admin_ms: Pcts;
  p50_ratio: number;
  p95_ratio: number;
  verdict: string;
}

export interface RestrictedReport {
  projects: number;
  member_of: number;
  shapes: RestrictedShapeResult[];
  failures: string[];
}

/** `call` that answers the body of a 2xx and throws with the answer otherwise. */
async function ok(url: string, method: string, path: string, token: string | null, body: unknown): Promise<any> {
  const r = await call(url, method, path, token, body);
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json;
}

/** Registers an Artist through the gateway and answers its id and an API key of its own. */
async function artist(url: string, adminKey: string): Promise<{ id: string; key: string }> {
  const suffix = Date.now().toString(36);
  const email = `restricted-${suffix}@bench.example`;
  const password = `bench-password-${suffix}`;
  const reg = await ok(url, 'POST', '/auth/register', adminKey, { email, password, name: 'Bench Artist', role: 'Artist' });
  const login = await ok(url, 'POST', '/auth/login', null, { email, password });
  const key = await ok(url, 'POST', '/auth/api-keys', login.access_token as string, { name: 'bench restricted' });
  return { id: reg.user.id as string, key: key.token as string };
}

/** Restricts every Project (the Artist a member of the first MEMBER_PROJECTS seeded ones), then times (r1) and (r2). */
export async function restrictedShapes(o: RestrictedOptions): Promise<RestrictedReport> {
  const projects = (
    await o.sql.query<{ id: string; code: string }>(
      "select id, data->>'code' as code from records.record where entity_type = 'Project' and active order by data->>'code'",
    )
  ).rows;
  const seeded = projects.filter((p) => p.code.startsWith('show'));
  const memberOf = seeded.slice(0, Math.min(MEMBER_PROJECTS, seeded.length));
  const memberIds = new Set(memberOf.map((p) => p.id));
  const user = await artist(o.url, o.adminKey);
  o.log(`restricting ${projects.length} projects through the gateway; Artist ${user.id} a member of ${memberOf.map((p) => p.code).join(', ')}`);
  for (const p of projects) {
    const members = memberIds.has(p.id) ? [{ type: 'User', id: user.id }] : [];
    await ok(o.url, 'PATCH', `/entities/Project/${p.id}`, o.adminKey, { data: { restricted: true, members } });
  }
  await o.sql.query('vacuum analyze records.record');

  const shapes = [
    { key: 'r1', title: 'status, no project filter', body: { filters: [['status', 'is', 'ip']], limit: 50 } },
    {
      key: 'r2',
      title: 'member project + status',
      body: {
        filters: [
          ['project_id', 'is', memberOf[0]!.id],
          ['status', 'is', 'ip'],
        ],
        limit: 50,
      },
    },
  ];
  const failures: string[] = [];
  const results: RestrictedShapeResult[] = [];
  const lean = new LeanClient(o.url);
  try {
    for (const shape of shapes) {
      o.log(`(${shape.key}) ${shape.title}: ${o.iterations} samples as the Artist and as the Admin, in alternating blocks`);
      const text = JSON.stringify(shape.body);
      const checks: string[] = [];
      // One page each, checked: the Artist's holds only member projects, and as many Tasks as the Admin's.
      const artistPage = (await ok(o.url, 'POST', '/entities/Task/query', user.key, shape.body)) as { items: { project_id: string }[] };
      const adminPage = (await ok(o.url, 'POST', '/entities/Task/query', o.adminKey, shape.body)) as { items: { project_id: string }[] };
      if (artistPage.items.some((r) => !memberIds.has(r.project_id))) checks.push('MISS: the Artist was given a Task of a project it is not a member of');
      if (artistPage.items.length < adminPage.items.length) {
        checks.push(`MISS: the Artist's page holds ${artistPage.items.length} Tasks, the Admin's ${adminPage.items.length}`);
      }
      const timed = (key: string) => async () => {
        const r = await lean.request('POST', '/entities/Task/query', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, text);
        if (r.status !== 200) throw new Error(`(${shape.key}) answered ${r.status}: ${r.text.slice(0, 200)}`);
      };
      const asArtist: number[] = [];
      const asAdmin: number[] = [];
      await alternate(o.iterations, [
        { into: asArtist, run: timed(user.key) },
        { into: asAdmin, run: timed(o.adminKey) },
      ]);
      const a = pcts(asArtist);
      const d = pcts(asAdmin);
      const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
      const p50 = ratio(a.p50, d.p50);
      const p95 = ratio(a.p95, d.p95);
      if (p50 > TARGET_RESTRICTED_RATIO) checks.push(`MISS: the Artist's p50 ${p50}× the Admin's > ${TARGET_RESTRICTED_RATIO}×`);
      if (p95 > TARGET_RESTRICTED_RATIO) checks.push(`MISS: the Artist's p95 ${p95}× the Admin's > ${TARGET_RESTRICTED_RATIO}×`);
      failures.push(...checks.map((c) => `(${shape.key}) ${c}`));
      results.push({
        ...shape,
        matched: { artist: artistPage.items.length, admin: adminPage.items.length },
        artist_ms: a,
        admin_ms: d,
        p50_ratio: p50,
        p95_ratio: p95,
        verdict: checks.length ? checks.join('; ') : 'PASS',
      });
    }
  } finally {
    lean.close();
  }
  return { projects: projects.length, member_of: memberOf.length, shapes: results, failures };
}

/** The report's lines for the restricted shapes. */
export function restrictedLines(r: RestrictedReport, iterations: number): string[] {
  const f = (p: Pcts) => `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)}`;
  return [
    `restricted projects: all ${r.projects} restricted, the Artist a member of ${r.member_of} (ms, p50 / p95, ${iterations} samples; target ≤ ${TARGET_RESTRICTED_RATIO}× the Admin at both)`,
    `query                               Artist          Admin           ratio p50 / p95   matched   verdict`,
    ...r.shapes.map(
      (s) =>
        `(${s.key}) ${s.title.padEnd(30)} ${f(s.artist_ms).padEnd(15)} ${f(s.admin_ms).padEnd(15)} ${`${s.p50_ratio} / ${s.p95_ratio}`.padEnd(17)} ${String(s.matched.artist).padEnd(9)} ${s.verdict}`,
    ),
  ];
}
