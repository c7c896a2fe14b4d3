/**
 * `node bench/dist/media.js [--clip-seconds 8] [--clip-height 720] [--rounds 7] [--warmup 1] [--upload-mib 2048] [--jobs 20] [--only wall,drain,rss]`
 * (`npm run bench:media`): reviewables on the whole stack, in one run on one machine.
 *   1. Upload → `done` wall time of a 16:9 H.264/AAC clip (720p unless `--clip-height`) through the gateway, against the same
 *      ffprobe + thumbnail + proxy commands (the argument lists the worker builds) run raw on the
 *      same file in the same run; and the time to the first thumbnail (upload start until the
 *      commit of the event that set `thumbnail_media_key`). Each round runs both, raw
 *      first in even rounds and the gateway first in odd ones, so a machine getting busier or
 *      quieter weighs on both alike; `--warmup` rounds before them are not counted (the first
 *      job of a fresh worker pays for its cold start). The verdict is the median of the per-round
 *      ratios (each against the raw run right beside it); the spread of those ratios is printed
 *      with it. Target: ≤ 1.15× raw.
 *   2. Time to drain `--jobs` queued jobs (a small clip each, queued while the workers are
 *      stopped) with one worker, then with two.
 *   3. Peak RSS growth of every process (gateway, media api, each worker; /proc/<pid>/status
 *      VmRSS sampled every 50 ms) during one upload of `--upload-mib` MiB streamed as a raw body.
 *      Target: ≤ 64 MiB each.
 * Prints a table and writes JSON to bench/results/.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, deleteStreams, ensureFfmpeg, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { interpretProbe, probeFile, proxyArgs, runTool, thumbnailArgs, type PlanLimits } from '@reelbase/media-transcode';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { startBenchStack } from './bench.stack.js';
import { bigUpload, Client, watch } from './media.client.js';
import { histogramTotals, meansBetween, type SeriesTotals } from './metrics.scrape.js';
import { processCpuMs, rssKiB } from './proc.cpu.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:media] ${msg}\n`);
const TARGET_RATIO = 1.15;
const TARGET_RSS_MIB = 64;
/** The worker's defaults (TRANSCODE_THREADS, TRANSCODE_MAX_DURATION_S), so raw runs the same commands. */
const LIMITS: PlanLimits = { threads: 2, maxDurationS: 4 * 3600 };

/** A non-negative integer option. */
function argOrZero(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} needs a non-negative integer`);
  return n;
}

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer`);
  return n;
}

/** The median (the mean of the middle two for an even count). */
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2;
};
/** The p-th quantile by linear interpolation (p in [0, 1]). */
const quantile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (sorted.length - 1) * p;
  const lo = Math.floor(at);
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (at - lo);
};

async function rawRun(ffmpeg: string, ffprobe: string, file: string, out: string) {
  const t0 = performance.now();
  const run = { timeoutMs: 600_000 };
  const source = interpretProbe(await probeFile(ffprobe, file, run), LIMITS.maxDurationS);
  const t1 = performance.now();
  await runTool('ffmpeg', ffmpeg, thumbnailArgs(file, join(out, 'thumb.jpg'), source, LIMITS), run);
  const t2 = performance.now();
  await runTool('ffmpeg', ffmpeg, proxyArgs(file, join(out, 'proxy.mp4'), source, LIMITS), run);
  const t3 = performance.now();
  return { probeMs: t1 - t0, thumbMs: t2 - t1, proxyMs: t3 - t2, totalMs: t3 - t0 };
}

/**
 * CPU seconds a process and its reaped children (the tools it ran) have used, or with `own` the
 * process's alone; 0 when it is gone.
 */
const cpuSeconds = (pid: number | undefined, own = false): number => (pid === undefined ? 0 : (processCpuMs(pid, !own) ?? 0) / 1000);

/** Sums and counts of the workers' timing histograms, by series (`queue_wait`, `fetch`, `probe`, `thumbnail`, `proxy`, `store`, `job`). */
type WorkerTimes = Record<string, { sum: number; count: number }>;

/**
 * Reads the transcode timings from every worker's `/metrics` (docs/media.md, "Metrics") and adds
 * them up: the queue wait (original stored → attempt start) and each successful step.
 */
async function workerTimes(stack: Stack, workers: string[]): Promise<WorkerTimes> {
  const out: WorkerTimes = {};
  const add = (key: string, field: 'sum' | 'count', v: number) => {
    const t = (out[key] ??= { sum: 0, count: 0 });
    t[field] += v;
  };
  for (const w of workers) {
    const port = stack.ports[w]?.http;
    if (!port) continue;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    for (const line of text.split('\n')) {
      let m = /^media_transcode_queue_wait_seconds_(sum|count)(?:\{[^}]*\})? ([0-9.eE+-]+)$/.exec(line);
      if (m) {
        add('queue_wait', m[1] as 'sum' | 'count', Number(m[2]));
        continue;
      }
      m = /^media_transcode_seconds_(sum|count)\{(.*)\} ([0-9.eE+-]+)$/.exec(line);
      if (!m || !/outcome="ok"/.test(m[2]!)) continue;
      const step = /step="([a-z]+)"/.exec(m[2]!)?.[1];
      if (step) add(step, m[1] as 'sum' | 'count', Number(m[3]));
    }
  }
  return out;
}

/** Mean milliseconds per series between two readings. */
function meanMs(before: WorkerTimes, after: WorkerTimes): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { sum: 0, count: 0 };
    const n = a.count - b.count;
    if (n > 0) out[k] = Math.round(((a.sum - b.sum) / n) * 1000);
  }
  return out;
}

/** Sets the given workers running (and only them), each waited for. */
async function workersUp(stack: Stack, names: string[]): Promise<void> {
  await Promise.all(names.map((n) => stack.restart(n)));
}

async function main(): Promise<number> {
  const clipSeconds = arg('clip-seconds', 8);
  const clipHeight = arg('clip-height', 720);
  // 16:9 with even sides, as a render's proxy source would be.
  const clipSize = `${Math.round((clipHeight * 16) / 9 / 2) * 2}x${clipHeight - (clipHeight % 2)}`;
  const rounds = arg('rounds', 7);
  const warmup = argOrZero('warmup', 1);
  const uploadMiB = arg('upload-mib', 2048);
  const jobs = arg('jobs', 20);
  const onlyAt = process.argv.indexOf('--only');
  const phases = new Set(onlyAt < 0 ? ['wall', 'drain', 'rss'] : (process.argv[onlyAt + 1] ?? '').split(','));
  const ff = ensureFfmpeg(process.env, log);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-media-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('benchmedia');
  let stack: Stack | undefined;
  try {
    log(`making the clips with ffmpeg (${clipSeconds} s ${clipSize} H.264/AAC; 2 s 640x360 for the queue)`);
    const ffmpeg = (...args: string[]) => {
      const r = spawnSync(ff.ffmpeg, ['-v', 'error', '-y', ...args], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`ffmpeg: ${r.stderr}`);
    };
    const clip = join(dir, 'clip.mov');
    ffmpeg(
      ...['-f', 'lavfi', '-i', `testsrc2=size=${clipSize}:rate=25:duration=${clipSeconds}`, '-f', 'lavfi', '-i', `sine=frequency=440:duration=${clipSeconds}`],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip],
    );
    const small = join(dir, 'small.mp4');
    ffmpeg('-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25:duration=2', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', small);
    const clipData = await readFile(clip);
    const smallData = await readFile(small);

    log(`starting the stack with two transcode workers (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix,
      dataDir: join(dir, 'data'),
      logDir: join(dir, 'logs'),
      replicas: { TRANSCODE_WORKERS: 2 },
      log,
    });
    const workers = stack.services.filter((s) => s.startsWith('media-worker'));
    if (workers.length < 2 || !stack.services.includes('media-transcode'))
      throw new Error(`the media services are not all built: ${stack.services.join(', ')}`);
    const fx = await bootstrapGateway(stack.url);
    const c = new Client(stack.url, fx.apiKey);

    // 1. upload → done against the raw commands, in pairs whose order flips every round so
    // both see the same machine state; warm-up rounds first, not counted.
    const raw: Awaited<ReturnType<typeof rawRun>>[] = [];
    const service: { doneMs: number; seenMs: number; thumbMs: number | null; uploadMs: number }[] = [];
    const rawRound = async (r: number) => {
      const out = join(dir, `raw-${r}`);
      await mkdir(out, { recursive: true });
      return rawRun(ff.ffmpeg, ff.ffprobe, clip, out);
    };
    // Both times come from the database's own clock, not from polling: `done` is the
    // Representation's `updated_at` (the `done` write is its last one), the first thumbnail the
    // `created_at` of the event whose changes set `thumbnail_media_key` (the log, docs/api-notes.md
    // "Events"). Polling only notices that the job settled, once a second, so that the polling's
    // own work (each poll passes the gateway, the media api, records and the database) takes
    // little CPU from the encode it is timing.
    const serviceRound = async (r: number) => {
      const versionId = await c.version(fx.projectId, `wall_${r}`);
      const lastEvent = await c.lastEventId();
      const t0 = performance.now();
      const t0Epoch = Date.now();
      const representationId = await c.upload(versionId, clipData, 'video/quicktime', 'clip.mov');
      const uploadMs = performance.now() - t0;
      const w = await watch(c, versionId, t0, 1000);
      if (w.status !== 'done') throw new Error(`the clip ended ${w.status}: ${w.error}`);
      const doneMs = (await c.updatedAt('Representation', representationId)) - t0Epoch;
      const thumbAt = await c.firstThumbnailAt(representationId, lastEvent);
      return { doneMs, seenMs: w.doneMs, thumbMs: thumbAt === null ? null : thumbAt - t0Epoch, uploadMs };
    };
    let timesBefore: WorkerTimes = {};
    // The services' latency histograms over the measured rounds: where the upload and the job's
    // record writes spend their time (gateway, media api, records).
    const latencyPorts = [stack.ports.gateway?.ops, stack.ports['media-transcode']?.http, stack.ports.records?.http].filter(
      (p): p is number => p !== undefined,
    );
    let latencyBefore: Map<string, SeriesTotals>[] = [];
    // `<worker>:own` is a worker's own CPU, without the tools it ran.
    const cpuProcs = ['bench', ...stack.services, ...workers.map((w) => `${w}:own`)];
    const cpuOf = (p: string) => (p === 'bench' ? cpuSeconds(process.pid) : cpuSeconds(stack!.pid(p.replace(/:own$/, '')), p.endsWith(':own')));
    const rawCpu: Record<string, number> = {};
    const serviceCpu: Record<string, number> = {};
    for (let r = 0; phases.has('wall') && r < warmup + rounds; r++) {
      if (r === warmup) {
        timesBefore = await workerTimes(stack, workers);
        latencyBefore = await Promise.all(latencyPorts.map((p) => histogramTotals(p)));
      }
      const label = r < warmup ? `warm-up ${r + 1}/${warmup}` : `round ${r - warmup + 1}/${rounds}`;
      const rawFirst = (r - warmup) % 2 === 0;
      log(`${label}: ${rawFirst ? 'raw, then through the gateway' : 'through the gateway, then raw'}`);
      let rawOne: Awaited<ReturnType<typeof rawRun>>;
      let serviceOne: Awaited<ReturnType<typeof serviceRound>>;
      // CPU of every process (the bench's own includes the raw tools; a worker's, its tools) per kind of run.
      const cpuDuring = async <T>(into: Record<string, number>, fn: () => Promise<T>): Promise<T> => {
        const before = Object.fromEntries(cpuProcs.map((p) => [p, cpuOf(p)]));
        const out = await fn();
        if (r >= warmup) {
          for (const p of cpuProcs) into[p] = (into[p] ?? 0) + cpuOf(p) - before[p]!;
        }
        return out;
      };
      if (rawFirst) {
        rawOne = await cpuDuring(rawCpu, () => rawRound(r));
        serviceOne = await cpuDuring(serviceCpu, () => serviceRound(r));
      } else {
        serviceOne = await cpuDuring(serviceCpu, () => serviceRound(r));
        rawOne = await cpuDuring(rawCpu, () => rawRound(r));
      }
      log(`${label}: raw ${Math.round(rawOne.totalMs)} ms, through the gateway ${Math.round(serviceOne.doneMs)} ms`);
      if (r < warmup) continue;
      raw.push(rawOne);
      service.push(serviceOne);
    }
    // Where the time of a measured round went inside the workers (means over the rounds).
    const jobSteps = phases.has('wall') ? meanMs(timesBefore, await workerTimes(stack, workers)) : {};
    const latencyMeans = phases.has('wall')
      ? (await Promise.all(latencyPorts.map((p) => histogramTotals(p)))).flatMap((after, i) => meansBetween(latencyBefore[i]!, after))
      : [];
    const rawMs = raw.length ? median(raw.map((x) => x.totalMs)) : NaN;
    const doneMs = service.length ? median(service.map((x) => x.doneMs)) : NaN;
    const perRound = service.map((x, i) => x.doneMs / raw[i]!.totalMs);
    const ratio = perRound.length ? median(perRound) : NaN;
    // Against the raw probe and proxy alone: the least any pipeline could take, were the thumbnail free.
    const perRoundNoThumb = service.map((x, i) => x.doneMs / (raw[i]!.probeMs + raw[i]!.proxyMs));

    // 2. drain `jobs` queued jobs with 1 worker, then with 2.
    const drain = async (running: string[]) => {
      for (const w of workers) await stack!.kill(w, 'SIGTERM');
      const versions: string[] = [];
      for (let i = 0; i < jobs; i++) {
        const v = await c.version(fx.projectId, `q${running.length}_${i}`);
        await c.upload(v, smallData, 'video/mp4', 'small.mp4');
        versions.push(v);
      }
      log(`${jobs} jobs queued; starting ${running.length} worker(s)`);
      const t0 = performance.now();
      await workersUp(stack!, running);
      const ends = await Promise.all(versions.map((v) => watch(c, v, t0, 100)));
      const failed = ends.filter((x) => x.status !== 'done').length;
      if (failed) throw new Error(`${failed} queued jobs did not end done`);
      return Math.max(...ends.map((x) => x.doneMs));
    };
    const oneMs = phases.has('drain') ? await drain(workers.slice(0, 1)) : NaN;
    const twoMs = phases.has('drain') ? await drain(workers.slice(0, 2)) : NaN;

    // 3. RSS of every process during one big upload (last: its job is left to the stop).
    log(`RSS during one ${uploadMiB} MiB upload`);
    const procs = ['gateway', 'media-transcode', ...workers];
    const base = Object.fromEntries(procs.map((p) => [p, rssKiB(stack!.pid(p))]));
    const peak = { ...base };
    // Peak per quarter of the upload: growth that levels off is the garbage collector's cadence;
    // growth with every quarter would be bytes held.
    const quarters = Object.fromEntries(procs.map((p) => [p, [0, 0, 0, 0]]));
    const total = uploadMiB * 1024 * 1024;
    let quarter = 0;
    const sampler = setInterval(() => {
      if (!phases.has('rss')) return;
      for (const p of procs) {
        const now = rssKiB(stack!.pid(p));
        peak[p] = Math.max(peak[p]!, now);
        quarters[p]![quarter] = Math.max(quarters[p]![quarter]!, now - base[p]!);
      }
    }, 50);
    let big = { status: 200, ms: NaN };
    try {
      if (phases.has('rss')) {
        const bigVersion = await c.version(fx.projectId, 'big');
        big = await bigUpload(c, bigVersion, total, (sent) => (quarter = Math.min(3, Math.floor((sent / total) * 4))));
      }
    } finally {
      clearInterval(sampler);
    }
    if (big.status !== 200) throw new Error(`the ${uploadMiB} MiB upload answered ${big.status}`);
    const rss = Object.fromEntries(
      procs.map((p) => [
        p,
        {
          before_mib: +(base[p]! / 1024).toFixed(1),
          peak_mib: +(peak[p]! / 1024).toFixed(1),
          growth_mib: +((peak[p]! - base[p]!) / 1024).toFixed(1),
          growth_by_quarter_mib: quarters[p]!.map((q) => +(q / 1024).toFixed(1)),
        },
      ]),
    );

    const report = {
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, node: process.version },
      options: { clipSeconds, clipSize, rounds, warmup, uploadMiB, jobs, threads: LIMITS.threads },
      wall: {
        raw_ms: raw.map((x) => Math.round(x.totalMs)),
        raw_steps_ms: raw.map((x) => ({ probe: Math.round(x.probeMs), thumbnail: Math.round(x.thumbMs), proxy: Math.round(x.proxyMs) })),
        service_done_ms: service.map((x) => Math.round(x.doneMs)),
        service_done_seen_by_polling_ms: service.map((x) => Math.round(x.seenMs)),
        service_upload_answer_ms: service.map((x) => Math.round(x.uploadMs)),
        first_thumbnail_ms: service.map((x) => (x.thumbMs === null ? null : Math.round(x.thumbMs))),
        ratio: +ratio.toFixed(2),
        ratio_of_medians: +(doneMs / rawMs).toFixed(2),
        ratio_per_round: perRound.map((x) => +x.toFixed(2)),
        ratio_spread: perRound.length
          ? {
              min: +Math.min(...perRound).toFixed(2),
              p25: +quantile(perRound, 0.25).toFixed(2),
              p75: +quantile(perRound, 0.75).toFixed(2),
              max: +Math.max(...perRound).toFixed(2),
            }
          : null,
        service_minus_raw_ms: service.map((x, i) => Math.round(x.doneMs - raw[i]!.totalMs)),
        ratio_vs_probe_and_proxy: perRoundNoThumb.length ? +median(perRoundNoThumb).toFixed(2) : null,
        ratio_vs_probe_and_proxy_per_round: perRoundNoThumb.map((x) => +x.toFixed(2)),
        service_latency_means: latencyMeans,
        worker_mean_ms: jobSteps,
        // CPU seconds per measured round, by process: raw runs against runs through the gateway.
        cpu_per_round_s: Object.fromEntries(
          cpuProcs.map((p) => [
            p,
            { raw: +((rawCpu[p] ?? 0) / Math.max(1, raw.length)).toFixed(2), gateway: +((serviceCpu[p] ?? 0) / Math.max(1, service.length)).toFixed(2) },
          ]),
        ),
        target: `upload → done ≤ ${TARGET_RATIO}× raw`,
        verdict: ratio <= TARGET_RATIO ? 'PASS' : 'MISS',
      },
      rss: {
        upload_mib: uploadMiB,
        upload_ms: Math.round(big.ms),
        mib_per_s: +(uploadMiB / (big.ms / 1000)).toFixed(1),
        processes: rss,
        target: `growth ≤ ${TARGET_RSS_MIB} MiB per process`,
        verdict: Object.values(rss).every((x) => x.growth_mib <= TARGET_RSS_MIB) ? 'PASS' : 'MISS',
      },
      drain: { jobs, one_worker_ms: Math.round(oneMs), two_workers_ms: Math.round(twoMs), speedup: +(oneMs / twoMs).toFixed(2) },
    };

    const line = (a: string, b: string) => process.stdout.write(`${a.padEnd(44)} ${b}\n`);
    process.stdout.write(
      `\nreviewables on ${report.machine.cpus} cores (${clipSeconds} s ${clipSize} clip, ${rounds} rounds after ${warmup} warm-up, medians)\n`,
    );
    if (phases.has('wall')) {
      line('raw ffprobe + thumbnail + proxy', `${Math.round(rawMs)} ms`);
      line('upload → done through the gateway', `${Math.round(doneMs)} ms`);
      const sp = report.wall.ratio_spread;
      line(
        '  ratio per round (median)',
        `${report.wall.ratio}×, target ≤ ${TARGET_RATIO}×: ${report.wall.verdict}  (ratio of medians ${report.wall.ratio_of_medians}×)`,
      );
      line('  per round', `${report.wall.ratio_per_round.join(' / ')}  (min ${sp?.min}, p25 ${sp?.p25}, p75 ${sp?.p75}, max ${sp?.max})`);
      line('  gateway minus raw, per round', `${report.wall.service_minus_raw_ms.join(' / ')} ms`);
      line(
        '  against raw probe + proxy alone',
        `${report.wall.ratio_vs_probe_and_proxy}× median; per round ${report.wall.ratio_vs_probe_and_proxy_per_round.join(' / ')}`,
      );
      line('upload answered (original stored)', `${Math.round(median(service.map((x) => x.uploadMs)))} ms`);
      line(
        '  in the workers (means)',
        `queue wait ${jobSteps.queue_wait} ms, job ${jobSteps.job} ms (waiting for the original ${jobSteps.fetch}, probe ${jobSteps.probe}, thumbnail ${jobSteps.thumbnail}, proxy ${jobSteps.proxy}, storing it ${jobSteps.store} ms)`,
      );
      const cpu = Object.entries(report.wall.cpu_per_round_s)
        .filter(([, v]) => v.raw >= 0.05 || v.gateway >= 0.05)
        .map(([p, v]) => `${p} ${v.raw}/${v.gateway}`);
      line('  CPU s per round, raw/gateway', cpu.join(', '));
      line('  service latencies (means over the rounds)', '');
      for (const l of latencyMeans) process.stdout.write(`    ${l}\n`);
      line(
        'time to first thumbnail',
        `${Math.round(median(service.map((x) => x.thumbMs ?? Infinity)))} ms  (raw probe + thumbnail ${Math.round(median(raw.map((x) => x.probeMs + x.thumbMs)))} ms)`,
      );
    }
    if (phases.has('drain')) {
      line(`drain ${jobs} queued jobs, 1 worker`, `${report.drain.one_worker_ms} ms`);
      line(`drain ${jobs} queued jobs, 2 workers`, `${report.drain.two_workers_ms} ms  (${report.drain.speedup}×)`);
    }
    if (phases.has('rss')) {
      line(`${uploadMiB} MiB upload`, `${report.rss.upload_ms} ms, ${report.rss.mib_per_s} MiB/s`);
      for (const [p, v] of Object.entries(rss)) {
        line(`  RSS growth ${p}`, `${v.growth_mib} MiB (${v.before_mib} → ${v.peak_mib}; by quarter ${v.growth_by_quarter_mib.join(' / ')})`);
      }
      line('  target', `≤ ${TARGET_RSS_MIB} MiB each: ${report.rss.verdict}`);
    }

    await mkdir(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `media-${report.at.replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    log(`written ${file}`);
    return 0;
  } finally {
    await stack?.stop().catch((err: unknown) => log(`stopping the stack: ${String(err)}`));
    await deleteStreams(natsPrefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
