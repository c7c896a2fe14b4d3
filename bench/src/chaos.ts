/**
 * `node bench/dist/chaos.js [--faults records,gateway,...] [--seconds 12] [--json <file>]` (`npm run chaos`):
 * faults, counted (docs/operations.md, "Faults, counted"). The whole stack on its own embedded
 * PostgreSQL and its own nats-server (both on fixed ports, so they can be restarted under the
 * services), a sustained mixed load through the gateway — creates, patches, queries, uploads of a
 * small real clip, a WebSocket follower that reconnects with `since=`, a webhook receiver — and,
 * one fault at a time, each service killed with SIGKILL and started again, NATS restarted,
 * PostgreSQL restarted. Per fault one table row: what was acknowledged, what was found afterwards,
 * events per write, what the follower and the webhook saw, how the uploads ended, 503s against
 * hung requests, and the time to recover. Exits 1 when a target was missed.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ensureFfmpeg,
  startEmbeddedPostgres,
  startNatsServer,
  startStack,
  startWebhookReceiver,
  withDatabase,
  ensureDatabase,
  type EmbeddedPostgres,
  type NatsServerProcess,
  type Stack,
  type WebhookReceiver,
} from '@reelbase/lib-testkit';
import { DEADLINE_MS, eventsAfter, Follower, Gateway, lastEventId, type Outcome } from './chaos.clients.js';
import { bootstrapGateway } from './gateway.bootstrap.js';

const log = (msg: string): void => void process.stderr.write(`[chaos] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every fault, in the order a full run takes them. */
export const FAULTS = ['gateway', 'auth', 'records', 'schema', 'events', 'notifier', 'media-transcode', 'media-worker', 'nats', 'postgres'] as const;
type Fault = (typeof FAULTS)[number];

/** How long a killed process stays down before it is started again (a supervisor's restart delay). */
const DOWN_MS = 1_500;
/** How long the events, deliveries and uploads of a phase may take to settle once the load stops. */
const SETTLE_MS = 90_000;
const WRITERS = 4;
/**
 * How long after the load's end the writers go on while writes have not recovered (no write
 * acknowledged since the last that failed): a service restarting slowly on a busy machine still
 * shows whether it comes back, and the target is recovery within this bound of the fault's end
 * of load, not within the load's seconds.
 */
const RECOVERY_BOUND_MS = 60_000;
const WEBHOOK = 'chaos';

function args() {
  const get = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const faults = (get('faults') ?? FAULTS.join(',')).split(',').filter(Boolean);
  for (const f of faults) if (!(FAULTS as readonly string[]).includes(f)) throw new Error(`--faults: unknown fault ${f}; one of ${FAULTS.join(', ')}`);
  const seconds = Number(get('seconds') ?? 12);
  if (!Number.isFinite(seconds) || seconds < 3) throw new Error('--seconds needs a number of at least 3');
  return { faults: faults as Fault[], seconds, json: get('json'), dir: get('dir') };
}

/** What one phase's load did. */
interface Load {
  creates: Map<string, string>; // id -> code, acknowledged
  patches: Map<string, string>; // id -> description, acknowledged
  uploads: string[]; // version ids whose upload was acknowledged
  ok: number;
  s503: number;
  otherStatus: Map<number, number>;
  refused: number;
  hung: number;
  /** Writes from the fault on: when sent, when answered, whether acknowledged. */
  afterFault: Array<{ sentAt: number; doneAt: number; ok: boolean }>;
  faultAt: number | null;
  reconnectsBefore: number;
}

/**
 * Time to recover: from the fault until the first write acknowledged that was sent after the last
 * write that failed; 0 when no write failed; null when none succeeded after the last failure.
 */
function recoverMs(load: Load): number | null {
  if (load.faultAt === null) return null;
  const failures = load.afterFault.filter((w) => !w.ok);
  if (!failures.length) return 0;
  const lastFail = Math.max(...failures.map((w) => w.doneAt));
  const oks = load.afterFault.filter((w) => w.ok && w.sentAt >= lastFail).map((w) => w.doneAt);
  return oks.length ? Math.min(...oks) - load.faultAt : null;
}

export interface ChaosRow {
  fault: string;
  writesAcked: number;
  writesFound: number;
  eventsOne: number;
  eventsWrong: number;
  wsExpected: number;
  wsSeen: number;
  wsInOrder: boolean;
  wsDuplicates: number;
  wsReconnects: number;
  hookExpected: number;
  hookDelivered: number;
  hookInOrder: boolean;
  hookRepeats: number;
  uploadsAcked: number;
  uploadsDone: number;
  uploadsFailedWithReason: number;
  uploadsStuck: number;
  answered503: number;
  refused: number;
  hung: number;
  otherErrors: string;
  recoverMs: number | null;
  pass: Record<string, boolean>;
}

/** Dependencies of our own, restartable on their ports. */
interface Own {
  pg: EmbeddedPostgres;
  nats: NatsServerProcess;
  dataDir: string;
}

async function startOwn(dataDir: string): Promise<Own & { databaseUrl: string }> {
  const pg = await startEmbeddedPostgres(dataDir, (l) => log(l));
  await ensureDatabase(pg.adminUrl, 'reelbase_chaos');
  const nats = await startNatsServer(dataDir, (l) => log(l));
  return { pg, nats, dataDir, databaseUrl: withDatabase(pg.adminUrl, 'reelbase_chaos') };
}

async function inject(fault: Fault, stack: Stack, own: Own): Promise<void> {
  if (fault === 'nats') {
    await own.nats.stop();
    await sleep(DOWN_MS);
    own.nats = await startNatsServer(own.dataDir, (l) => log(l), own.nats.port);
    return;
  }
  if (fault === 'postgres') {
    await own.pg.stop();
    await sleep(DOWN_MS);
    own.pg = await startEmbeddedPostgres(own.dataDir, (l) => log(l), own.pg.port);
    return;
  }
  const pid = stack.pid(fault);
  await stack.kill(fault, 'SIGKILL');
  log(`${fault}: pid ${pid} killed with SIGKILL`);
  await sleep(DOWN_MS);
  await stack.restart(fault);
  log(`${fault}: started again (pid ${stack.pid(fault)})`);
}

/** Runs the mixed load for `seconds`, the fault a third of the way in; resolves when the load has stopped. */
async function phase(gw: Gateway, projectId: string, clip: Buffer, fault: Fault, seconds: number, stack: Stack, own: Own, tag: string) {
  const load: Load = {
    creates: new Map(),
    patches: new Map(),
    uploads: [],
    ok: 0,
    s503: 0,
    otherStatus: new Map(),
    refused: 0,
    hung: 0,
    afterFault: [],
    faultAt: null,
    reconnectsBefore: 0,
  };
  const end = Date.now() + seconds * 1000;
  let n = 0;
  const count = (r: Outcome, write: boolean, sentAt: number) => {
    if (write && load.faultAt !== null && sentAt >= load.faultAt) load.afterFault.push({ sentAt, doneAt: Date.now(), ok: r.kind === 'ok' });
    if (r.kind === 'ok') load.ok++;
    else if (r.kind === 'status') {
      if (r.status === 503) load.s503++;
      else load.otherStatus.set(r.status, (load.otherStatus.get(r.status) ?? 0) + 1);
    } else if (r.kind === 'refused') load.refused++;
    else load.hung++;
    return r;
  };
  const pause = async (r: Outcome) => {
    if (r.kind !== 'ok') await sleep(100);
  };
  // Past `end`, writers go on only while writes have not recovered since the fault.
  const writing = () => Date.now() < end || (load.faultAt !== null && recoverMs(load) === null && Date.now() < end + RECOVERY_BOUND_MS);
  const writer = async () => {
    while (writing()) {
      const code = `${tag}_${n++}`;
      let t = Date.now();
      const c = count(await gw.call('POST', '/entities/Shot', { project_id: projectId, data: { code } }), true, t);
      if (c.kind !== 'ok') {
        await pause(c);
        continue;
      }
      load.creates.set(c.body.id, code);
      const description = `patched ${code}`;
      t = Date.now();
      const p = count(await gw.call('PATCH', `/entities/Shot/${c.body.id}`, { data: { description } }), true, t);
      if (p.kind === 'ok') load.patches.set(c.body.id, description);
      await pause(p);
      t = Date.now();
      const q = count(
        await gw.call('POST', '/entities/Shot/query', {
          filters: [
            ['project_id', 'is', projectId],
            ['code', 'is', code],
          ],
        }),
        false,
        t,
      );
      await pause(q);
    }
  };
  const uploader = async () => {
    while (Date.now() < end) {
      const code = `${tag}_v${n++}`;
      let t = Date.now();
      const v = count(await gw.call('POST', '/entities/Version', { project_id: projectId, data: { code } }), true, t);
      if (v.kind !== 'ok') {
        await pause(v);
        continue;
      }
      t = Date.now();
      const u = count(
        await gw.call('POST', `/versions/${v.body.id}/reviewable`, undefined, { data: clip, type: 'video/quicktime', name: 'clip.mov' }),
        false,
        t,
      );
      if (u.kind === 'ok') load.uploads.push(v.body.id);
      await sleep(u.kind === 'ok' ? 300 : 100);
    }
  };
  const injector = async () => {
    await sleep((seconds * 1000) / 3);
    load.faultAt = Date.now();
    log(`${fault}: fault now`);
    await inject(fault, stack, own);
  };
  await Promise.all([...Array.from({ length: WRITERS }, writer), uploader(), injector()]);
  return load;
}

/** Checks what a phase left behind, once everything had time to settle. */
async function settle(gw: Gateway, fault: Fault, load: Load, before: number, follower: Follower, rx: WebhookReceiver): Promise<ChaosRow> {
  // Writes found: each acknowledged create exists, each acknowledged patch is what it says.
  let found = 0;
  for (const [id, code] of load.creates) {
    const r = await gw.must('GET', `/entities/Shot/${id}`);
    if (r?.data?.code === code) found++;
    if (load.patches.has(id) && r?.data?.description === load.patches.get(id)) found++;
  }
  const writesAcked = load.creates.size + load.patches.size;

  // Events per write: exactly one create per acknowledged create, one update carrying each patch.
  const settleUntil = Date.now() + SETTLE_MS;
  let events: any[] = [];
  let perWrite = (): [number, number] => [0, 0];
  for (;;) {
    events = await eventsAfter(gw, before);
    const creates = new Map<string, number>();
    const patches = new Map<string, number>();
    for (const ev of events) {
      if (ev.entity_type !== 'Shot') continue;
      if (ev.action === 'create' && load.creates.has(ev.entity_id)) creates.set(ev.entity_id, (creates.get(ev.entity_id) ?? 0) + 1);
      if (ev.action === 'update' && load.patches.get(ev.entity_id) === ev.changes?.description) patches.set(ev.entity_id, (patches.get(ev.entity_id) ?? 0) + 1);
    }
    perWrite = () => {
      let one = 0;
      let wrong = 0;
      for (const id of load.creates.keys()) creates.get(id) === 1 ? one++ : wrong++;
      for (const id of load.patches.keys()) patches.get(id) === 1 ? one++ : wrong++;
      return [one, wrong];
    };
    if (perWrite()[0] === writesAcked || Date.now() > settleUntil) break;
    await sleep(500);
  }
  // Let a late duplicate show itself before counting.
  await sleep(1500);
  events = await eventsAfter(gw, before);
  const [eventsOne, eventsWrong] = perWrite();
  const last = events.at(-1)?.id ?? before;

  // The follower: every id in (before, last], in order, none twice.
  await waitUntil(() => follower.lastId() >= last, settleUntil);
  const seen = follower.ids.filter((id) => id > before && id <= last);
  const wsSet = new Set(seen);
  const wsInOrder = seen.every((id, i) => i === 0 || id > seen[i - 1]!);
  const expectedIds = events.map((e) => e.id as number);

  // The webhook: every Shot event of the phase, in log order.
  const hookIds = events.filter((e) => e.entity_type === 'Shot').map((e) => e.id as number);
  const hookSet = new Set(hookIds);
  const delivered = () => rx.unique(WEBHOOK).filter((id) => hookSet.has(id));
  await waitUntil(() => delivered().length >= hookIds.length, settleUntil);
  const got = delivered();
  const repeats = rx.delivered(WEBHOOK).filter((r) => hookSet.has(r.eventId)).length - got.length;

  // Uploads: each ends done or failed with a reason.
  let done = 0;
  let failed = 0;
  let stuck = 0;
  for (const versionId of load.uploads) {
    let status = '';
    let reason = '';
    while (Date.now() < settleUntil) {
      const r = await gw.call('GET', `/versions/${versionId}/reviewable`);
      if (r.kind === 'ok') {
        status = String(r.body.status);
        reason = String(r.body.transcode_error ?? '');
        if (status === 'done' || status === 'failed') break;
      }
      await sleep(500);
    }
    if (status === 'done') done++;
    else if (status === 'failed' && reason) failed++;
    else stuck++;
  }

  const row: ChaosRow = {
    fault,
    writesAcked,
    writesFound: found,
    eventsOne,
    eventsWrong,
    wsExpected: expectedIds.length,
    wsSeen: wsSet.size,
    wsInOrder,
    wsDuplicates: seen.length - wsSet.size,
    wsReconnects: follower.reconnects - load.reconnectsBefore,
    hookExpected: hookIds.length,
    hookDelivered: got.length,
    hookInOrder: got.every((id, i) => i === 0 || id > got[i - 1]!),
    hookRepeats: repeats,
    uploadsAcked: load.uploads.length,
    uploadsDone: done,
    uploadsFailedWithReason: failed,
    uploadsStuck: stuck,
    answered503: load.s503,
    refused: load.refused,
    hung: load.hung,
    otherErrors: [...load.otherStatus].map(([s, k]) => `${k}×${s}`).join(' '),
    recoverMs: recoverMs(load),
    pass: {},
  };
  row.pass = {
    writes: row.writesAcked > 0 && row.writesFound === row.writesAcked,
    events: row.eventsOne === row.writesAcked && row.eventsWrong === 0,
    websocket: row.wsSeen === row.wsExpected && expectedIds.every((id) => wsSet.has(id)) && row.wsInOrder && row.wsDuplicates === 0,
    webhook: row.hookDelivered === row.hookExpected && row.hookInOrder,
    uploads: row.uploadsStuck === 0 && row.uploadsAcked > 0,
    hung: row.hung === 0 && row.otherErrors === '',
    recovered: row.recoverMs !== null,
  };
  return row;
}

async function waitUntil(check: () => boolean, until: number): Promise<void> {
  while (!check() && Date.now() < until) await sleep(100);
}

const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');

/** The table as printed. */
export function formatTable(rows: ChaosRow[]): string {
  const head = ['fault', 'writes acked', 'found', 'events (1 each)', 'ws follower', 'webhook', 'uploads done/failed/stuck', '503 / refused / hung', 'recover'];
  const lines = rows.map((r) => [
    r.fault,
    String(r.writesAcked),
    `${r.writesFound} ${mark(r.pass.writes!)}`,
    `${r.eventsOne}${r.eventsWrong ? ` (${r.eventsWrong} not 1)` : ''} ${mark(r.pass.events!)}`,
    `${r.wsSeen}/${r.wsExpected}${r.wsInOrder ? '' : ' out of order'}${r.wsDuplicates ? ` ${r.wsDuplicates} twice` : ''} ${mark(r.pass.websocket!)}`,
    `${r.hookDelivered}/${r.hookExpected}${r.hookInOrder ? '' : ' out of order'}${r.hookRepeats ? ` (+${r.hookRepeats} repeat)` : ''} ${mark(r.pass.webhook!)}`,
    `${r.uploadsDone}/${r.uploadsFailedWithReason}/${r.uploadsStuck} ${mark(r.pass.uploads!)}`,
    `${r.answered503} / ${r.refused} / ${r.hung}${r.otherErrors ? ` (${r.otherErrors})` : ''} ${mark(r.pass.hung!)}`,
    `${r.recoverMs === null ? '-' : `${(r.recoverMs / 1000).toFixed(1)} s`} ${mark(r.pass.recovered!)}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [fmt(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}

/** A one-second 160×90 H.264/AAC clip made with ffmpeg. */
function makeClip(dir: string): Buffer {
  const ff = ensureFfmpeg(process.env, (l) => log(l));
  const file = join(dir, 'clip.mov');
  const r = spawnSync(
    ff.ffmpeg,
    ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=25:duration=1', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'].concat([
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      file,
    ]),
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr}`);
  return readFileSync(file);
}

async function main(): Promise<number> {
  const opts = args();
  const runDir = opts.dir ?? fileURLToPath(new URL(`../results/chaos-${new Date().toISOString().replace(/[:.]/g, '-')}/`, import.meta.url));
  const dataDir = join(runDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  log(`faults ${opts.faults.join(', ')}; ${opts.seconds} s of load each; logs and data in ${runDir}`);
  const clip = makeClip(runDir);
  const own = await startOwn(dataDir);
  let stack: Stack | undefined;
  let rx: WebhookReceiver | undefined;
  let follower: Follower | undefined;
  const stopAll = async () => {
    follower?.close();
    await stack?.stop().catch(() => undefined);
    await rx?.close().catch(() => undefined);
    await own.nats.stop().catch(() => undefined);
    await own.pg.stop().catch(() => undefined);
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void stopAll().then(() => process.exit(130)));
  try {
    stack = await startStack({
      freePorts: true,
      databaseUrl: own.databaseUrl,
      natsUrl: own.nats.url,
      natsPrefix: 'chaos',
      dataDir,
      logDir: join(runDir, 'logs'),
      logLevel: 'warn',
      env: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', WS_CONNECT_BURST: '100000', AUTH_FAILURE_BURST: '100000' },
      serviceEnv: {
        auth: { PASSWORD_SCRYPT_COST: '1024' },
        records: { OUTBOX_POLL_MS: '200' },
        notifier: {
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          WEBHOOK_BACKOFF_BASE_MS: '50',
          WEBHOOK_BACKOFF_MAX_MS: '500',
          WEBHOOK_TIMEOUT_MS: '2000',
          NOTIFIER_POLL_MS: '200',
        },
        'media-transcode': { SWEEP_INTERVAL_MS: '1000', SWEEP_GRACE_MS: '3000' },
        'media-worker': { TRANSCODE_ACK_WAIT_MS: '5000' },
      },
      log: (l) => log(`stack: ${l}`),
    });
    const fx = await bootstrapGateway(stack.url);
    const gw = new Gateway(stack.url, fx.apiKey);
    rx = await startWebhookReceiver();
    await gw.must('POST', '/webhooks', { url: rx.target(WEBHOOK), kind: 'webhook', secret: 'a-chaos-webhook-secret-32-chars!!', entity_types: ['Shot'] });
    follower = new Follower(stack.url, fx.apiKey, await lastEventId(gw));
    const rows: ChaosRow[] = [];
    for (const [i, fault] of opts.faults.entries()) {
      const before = await lastEventId(gw);
      const reconnects = follower.reconnects;
      const load = await phase(gw, fx.projectId, clip, fault, opts.seconds, stack, own, `p${i}`);
      load.reconnectsBefore = reconnects;
      const row = await settle(gw, fault, load, before, follower, rx);
      rows.push(row);
      log(`${fault}: ${JSON.stringify(row)}`);
    }
    const table = formatTable(rows);
    process.stdout.write(`\nFaults, counted (${opts.seconds} s of load per fault, request deadline ${DEADLINE_MS / 1000} s)\n${table}\n`);
    writeFileSync(join(runDir, 'chaos.json'), JSON.stringify(rows, null, 2));
    if (opts.json) writeFileSync(opts.json, JSON.stringify(rows, null, 2));
    const missed = rows.filter((r) => Object.values(r.pass).some((ok) => !ok)).map((r) => r.fault);
    process.stdout.write(missed.length ? `MISS: ${missed.join(', ')}\n` : 'every target met\n');
    return missed.length ? 1 : 0;
  } finally {
    await stopAll();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(2);
  },
);
