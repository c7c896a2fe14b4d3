/**
 * `npm run hostile`: malformed, huge, deep and hostile input, forged and re-spelled tokens,
 * framing tricks on raw sockets and concurrent races against a fresh local stack. Prints how
 * many requests were sent, every 5xx, every answer that broke the error shape (no
 * `x-request-id`, no `{"detail"}` body), every race with more than one winner, every breach of a
 * write rule or bound, and every secret found in the service logs (share, launch and login tokens,
 * API keys, passwords, the secrets key). The parts: hostile.rules.ts, hostile.launch.ts,
 * hostile.client.ts, hostile.schedules.ts, hostile.keys.ts, hostile.pipeline.ts, sharing
 * hostile.calls.ts. Exits non-zero when any of those is not zero.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { rawRequest, smugglingShapes } from './hostile.raw.js';
import { probeClient } from './hostile.client.js';
import { HOSTILE_MAX_KEYS, probeKeys } from './hostile.keys.js';
import { probeLaunch } from './hostile.launch.js';
import { probePipeline } from './hostile.pipeline.js';
import type { ProbeContext } from './hostile.calls.js';
import { probeRules } from './hostile.rules.js';
import { probeSchedules } from './hostile.schedules.js';
import { startBenchStack } from './bench.stack.js';

const log = (msg: string): void => void process.stderr.write(`[hostile] ${msg}\n`);

interface Tally {
  sent: number;
  byStatus: Map<number, number>;
  serverErrors: string[];
  badShape: string[];
  raceProblems: string[];
}

const tally: Tally = { sent: 0, byStatus: new Map(), serverErrors: [], badShape: [], raceProblems: [] };

function count(label: string, status: number, requestId: string | null, body: string): void {
  tally.sent += 1;
  tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
  if (status >= 500 && status !== 503) tally.serverErrors.push(`${label}: ${status} ${body.slice(0, 200)}`);
  if (status >= 400) {
    let detailed = false;
    try {
      detailed = 'detail' in (JSON.parse(body) as object);
    } catch {
      detailed = false;
    }
    if (!requestId || !detailed) tally.badShape.push(`${label}: ${status} request-id=${requestId ?? 'none'} body=${JSON.stringify(body.slice(0, 80))}`);
  }
}

async function send(base: string, label: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: string; headers: Headers }> {
  try {
    const res = await fetch(new URL(path, base), { ...init, signal: AbortSignal.timeout(15_000) });
    const body = await res.text();
    count(label, res.status, res.headers.get('x-request-id'), body);
    return { status: res.status, body, headers: res.headers };
  } catch (err) {
    tally.sent += 1;
    tally.serverErrors.push(`${label}: no answer (${(err as Error).message})`);
    return { status: 0, body: '', headers: new Headers() };
  }
}

const json = (token: string | null, body: string | Buffer, contentType = 'application/json'): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body,
});

/** Bodies no client should be able to turn into a 500. */
function hostileBodies(projectId: string): Record<string, string | Buffer> {
  let deep = '1';
  for (let i = 0; i < 5_000; i++) deep = `[${deep}]`;
  const manyKeys = `{${Array.from({ length: 30_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
  return {
    not_json: '{"data":',
    array: '[]',
    null: 'null',
    number: '1e309',
    deep_array: `{"data":{"x":${deep}}}`,
    many_unknown_keys: manyKeys,
    nul_in_key: `{"project_id":"${projectId}","data":{"a\\u0000b":1}}`,
    nul_in_value: `{"project_id":"${projectId}","data":{"code":"a\\u0000b"}}`,
    lone_surrogate: `{"project_id":"${projectId}","data":{"code":"\\ud800"}}`,
    huge_number: `{"project_id":"${projectId}","data":{"cut_in":${'9'.repeat(400)}}}`,
    bad_uuid: `{"project_id":"not-a-uuid","data":{}}`,
    sql_in_value: `{"project_id":"${projectId}","data":{"code":"'; DROP TABLE records.record; --"}}`,
    proto_pollution: `{"project_id":"${projectId}","data":{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}}`,
    invalid_utf8: Buffer.from([0x7b, 0x22, 0x64, 0x61, 0x74, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    over_body_limit: `{"project_id":"${projectId}","data":{"code":"${'x'.repeat(1_100_000)}"}}`,
    bom: `\ufeff{"project_id":"${projectId}","data":{}}`,
    dup_keys: `{"project_id":"${projectId}","project_id":"x","data":{}}`,
  };
}

const b64u = (b: Buffer): string => b.toString('base64url');
const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/** One real login token spelled differently, plus outright forgeries. */
function forgedTokens(token: string, apiKey: string): Record<string, string> {
  const [h, p, s] = token.split('.') as [string, string, string];
  const sig = Buffer.from(s, 'base64url');
  const r = sig.subarray(0, 32);
  const sv = BigInt(`0x${sig.subarray(32).toString('hex')}`);
  const highS = Buffer.from((P256_N - sv).toString(16).padStart(64, '0'), 'hex');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const lastChar = s.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const twin = alphabet[(alphabet.indexOf(lastChar) & ~0x3) | ((alphabet.indexOf(lastChar) + 1) & 0x3)]!;
  return {
    high_s_twin: `${h}.${p}.${b64u(Buffer.concat([r, highS]))}`,
    non_canonical_ending: `${h}.${p}.${s.slice(0, -1)}${twin}`,
    padded: `${h}.${p}.${s}==`,
    alg_none: `${b64u(Buffer.from('{"alg":"none","typ":"JWT"}'))}.${p}.`,
    hs256: `${b64u(Buffer.from('{"alg":"HS256","typ":"JWT"}'))}.${p}.${b64u(Buffer.alloc(32, 1))}`,
    far_exp: `${h}.${b64u(Buffer.from(JSON.stringify({ ...payload, exp: 4_102_444_800 })))}.${s}`,
    truncated: token.slice(0, -5),
    extra_segment: `${token}.x`,
    api_key_guess: `svc_${'A'.repeat(43)}`,
    api_key_sql: `svc_' OR '1'='1`,
    api_key_truncated: apiKey.slice(0, -2),
    empty: '',
    spaces: ' '.repeat(100),
    huge: 'x'.repeat(60_000),
  };
}

const FUZZ_ROUNDS = Number(process.env.HOSTILE_FUZZ_ROUNDS ?? 4000);

/** A small deterministic PRNG, so a finding can be reproduced with the same seed. */
function prng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

const SPICE = ['"', '\\', '{', '}', '[', ']', ',', ':', 'null', '-1', '1e999', '\\u0000', '\\ud800', '\u00ff', 'true', '"__proto__"', '0x10'];

/** Byte-level mutations of valid bodies on the write routes, a few in flight at a time. */
async function fuzz(base: string, token: string, projectId: string): Promise<void> {
  const rand = prng(Number(process.env.HOSTILE_SEED ?? 20261123));
  const seeds: [string, string, string][] = [
    [
      'POST',
      '/entities/Shot',
      JSON.stringify({ project_id: projectId, status: 'ip', data: { code: 'SH010', cut_in: 1001, sequence: { type: 'Sequence', id: projectId } } }),
    ],
    ['PATCH', `/entities/Project/${projectId}`, JSON.stringify({ data: { description: 'x', overrides: { tools: ['a/1'] } } })],
    ['POST', '/auth/login', JSON.stringify({ email: 'admin@hostile.test', password: 'wrong-password' })],
    ['POST', '/auth/api-keys', JSON.stringify({ name: 'fuzz' })],
    ['POST', '/entities/TimeLog', JSON.stringify({ project_id: projectId, data: { user: { type: 'User', id: projectId }, minutes: 5 } })],
  ];
  const one = async (i: number): Promise<void> => {
    const [method, path, seed] = seeds[Math.floor(rand() * seeds.length)]!;
    const chars = [...seed];
    const edits = 1 + Math.floor(rand() * 4);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rand() * (chars.length + 1));
      const op = rand();
      if (op < 0.35) chars.splice(at, 1);
      else if (op < 0.7) chars.splice(at, 0, SPICE[Math.floor(rand() * SPICE.length)]!);
      else chars.splice(at, 1, String.fromCharCode(Math.floor(rand() * 0x80)));
    }
    await send(base, `fuzz #${i} ${method} ${path}`, path, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: chars.join(''),
    });
  };
  const inFlight = 4;
  for (let i = 0; i < FUZZ_ROUNDS; i += inFlight) {
    await Promise.all(Array.from({ length: Math.min(inFlight, FUZZ_ROUNDS - i) }, (_, k) => one(i + k)));
  }
}

async function scanLogs(dir: string, secrets: Record<string, string>): Promise<string[]> {
  const found: string[] = [];
  for (const f of await readdir(dir).catch(() => [] as string[])) {
    const text = await readFile(join(dir, f), 'utf8').catch(() => '');
    for (const [name, secret] of Object.entries(secrets)) if (secret && text.includes(secret)) found.push(`${name} in ${f}`);
  }
  return found;
}

async function run(stack: Stack, logDir: string, dir: string): Promise<number> {
  const base = stack.url;
  const port = Number(new URL(base).port);
  const password = `hostile-pass-${Date.now()}`;
  const reg = (await (
    await fetch(new URL('/auth/register', base), json(null, JSON.stringify({ email: 'admin@hostile.test', password, name: 'Admin' })))
  ).json()) as { access_token: string };
  const token = reg.access_token;
  const key = (await (await fetch(new URL('/auth/api-keys', base), json(token, '{"name":"h"}'))).json()) as { token: string };
  const project = (await (await fetch(new URL('/entities/Project', base), json(token, '{"data":{"name":"H","code":"H"}}'))).json()) as { id: string };

  // The rules, launches, the command line, schedules and stored keys first: the bodies and the
  // fuzz below spend this address's login budget.
  const probe: ProbeContext = {
    base,
    adminToken: token,
    projectId: project.id,
    dir,
    databaseUrl: stack.databaseUrl,
    send: (label, path, init) => send(base, label, path, init),
    problem: (what) => tally.raceProblems.push(what),
    log,
  };
  const made = {
    ...(await probeRules(probe)),
    ...(await probeLaunch(probe)),
    ...(await probeClient(probe)),
    ...(await probeSchedules(probe)),
    ...(await probeKeys(probe)),
    ...(await probePipeline(probe)),
  };

  log('hostile bodies on every write route');
  for (const [name, body] of Object.entries(hostileBodies(project.id))) {
    for (const path of ['/entities/Shot', '/auth/login', '/auth/register', '/auth/api-keys', '/entities/Shot/query']) {
      await send(base, `body ${name} → ${path}`, path, json(token, body));
      await send(base, `body ${name} as text → ${path}`, path, json(token, body, 'text/plain'));
    }
    await send(base, `patch ${name}`, `/entities/Project/${project.id}`, { ...json(token, body), method: 'PATCH' });
  }

  log('forged and re-spelled tokens');
  for (const [name, t] of Object.entries(forgedTokens(token, key.token))) {
    for (const path of ['/me', '/events?limit=1']) {
      const res = await send(base, `token ${name} → ${path}`, path, { headers: { authorization: `Bearer ${t}` } });
      if (res.status === 200) tally.raceProblems.push(`forged token ${name} was accepted on ${path}`);
    }
  }
  for (const header of ['Bearer', 'Basic abc', `bearer  ${token}`, `Bearer ${token} extra`, token]) {
    await send(base, `authorization ${header.slice(0, 12)}`, '/me', { headers: { authorization: header } });
  }

  log('hostile paths and queries');
  const paths = [
    '/entities/Shot/..%2f..%2fauth',
    '/entities/shot/x',
    '/entities/Shot/%00',
    `/entities/${'A'.repeat(5000)}/x`,
    `/entities/Project/${project.id.toUpperCase()}`,
    '/entities/Project/00000000-0000-0000-0000-000000000000',
    '/events?limit=-1',
    '/events?limit=abc',
    '/events?limit=1e309',
    '/events?limit=1001',
    '/events?after=99999999999999999999',
    '/events?after=-5',
    '/events?limit=1&limit=2',
    '/events?entity_type=%00',
    '/events?project_id=nope',
    '/media/..%2f..%2fetc%2fpasswd',
    '/media/%2e%2e/x',
    '/media/a\\b',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/openapi.json?x=%ff',
    '/users/x/tasks',
    '/schema',
    '/me/%0d%0aSet-Cookie:x',
  ];
  for (const p of paths) await send(base, `path ${p.slice(0, 60)}`, p, { headers: { authorization: `Bearer ${token}` } });
  for (const m of ['PUT', 'OPTIONS', 'DELETE']) await send(base, `method ${m} /me`, '/me', { method: m, headers: { authorization: `Bearer ${token}` } });

  log('raw sockets: framing and smuggling shapes');
  for (const [name, req] of Object.entries(smugglingShapes(token))) {
    const ans = await rawRequest(port, req);
    const requestId = /x-request-id:\s*(\S+)/i.exec(ans.head)?.[1] ?? null;
    count(`raw ${name}`, ans.status, requestId, ans.body);
  }

  log(`mutation fuzz: ${FUZZ_ROUNDS} byte-level mutations of valid bodies`);
  await fuzz(base, token, project.id);

  log('races: one winner per If-Match, one bootstrap');
  for (let round = 0; round < 5; round++) {
    const created = await send(base, 'race create', '/entities/Shot', json(token, JSON.stringify({ project_id: project.id, data: { code: `R${round}` } })));
    const shot = JSON.parse(created.body) as { id: string };
    const etag = created.headers.get('etag')!;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(base, 'race patch', `/entities/Shot/${shot.id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'if-match': etag },
          body: JSON.stringify({ data: { description: `writer ${i}` } }),
        }),
      ),
    );
    const winners = answers.filter((a) => a.status === 200).length;
    if (winners !== 1) tally.raceProblems.push(`round ${round}: ${winners} If-Match winners`);
  }
  const boots = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      send(base, 'race register', '/auth/register', json(null, JSON.stringify({ email: `b${i}@h.test`, password: 'password-123', name: 'B' }))),
    ),
  );
  if (boots.some((b) => b.status === 200)) tally.raceProblems.push('a second bootstrap registration succeeded');

  log('scanning service logs for secrets');
  const [, , sig] = token.split('.');
  const secrets = await scanLogs(logDir, {
    password,
    login_token_signature: sig!,
    api_key: key.token,
    api_key_body: key.token.slice(4),
    secrets_key: stack.secretsKey,
    ...made,
  });

  const statuses = [...tally.byStatus.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  process.stdout.write(
    [
      `requests sent: ${tally.sent}`,
      `answers by status: ${statuses}`,
      `5xx other than 503: ${tally.serverErrors.length}`,
      ...tally.serverErrors.map((e) => `  ${e}`),
      `answers without x-request-id or {"detail"} body: ${tally.badShape.length}`,
      ...tally.badShape.slice(0, 30).map((e) => `  ${e}`),
      `rule, race or forgery problems: ${tally.raceProblems.length}`,
      ...tally.raceProblems.map((e) => `  ${e}`),
      `secrets found in logs: ${secrets.length}`,
      ...secrets.map((e) => `  ${e}`),
      '',
    ].join('\n'),
  );
  return tally.serverErrors.length + tally.badShape.length + tally.raceProblems.length + secrets.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-hostile-'));
  const logDir = join(dir, 'logs');
  const db = await createTestDatabase(undefined, 'rb_hostile');
  const prefix = uniquePrefix('hostile');
  let stack: Stack | undefined;
  let code = 1;
  try {
    log(`starting the stack (logs in ${logDir})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix: prefix,
      logDir,
      dataDir: join(dir, 'data'),
      logLevel: 'info',
      serviceEnv: { gateway: { IDEMPOTENCY_MAX_KEYS: String(HOSTILE_MAX_KEYS) } },
      log,
    });
    code = await run(stack, logDir, dir);
    return code;
  } finally {
    await stack?.stop().catch(() => undefined);
    await deleteStreams(prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
    // Service logs are only worth keeping when something was found.
    if (code === 0) await rm(dir, { recursive: true, force: true });
    else log(`service logs kept in ${logDir}`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
