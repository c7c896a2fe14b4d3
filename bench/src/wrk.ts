/**
 * HTTP load with wrk (a C load generator with tiny CPU cost per request, so it leaves the
 * two cores to the system under test). Each request creates a record with its own code.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runMeasured } from './command.runner.js';

const exec = promisify(execFile);

/** What wrk reported for one run. Latencies in milliseconds. */
export interface WrkResult {
  requestsPerSec: number;
  requests: number;
  durationSec: number;
  latencyAvgMs: number | null;
  latencyMs: { p50: number | null; p75: number | null; p90: number | null; p99: number | null };
  /** Responses with a status >= 400 ("Non-2xx or 3xx responses"). */
  non2xx: number;
  socketErrors: { connect: number; read: number; write: number; timeout: number };
}

/** One measured wrk run plus the CPU wrk itself used. */
export interface WrkRun extends WrkResult {
  clients: number;
  threads: number;
  cpuSeconds: number | null;
}

const TIME_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses one of wrk's times (`812.00us`, `1.23ms`, `2.00s`, `1.00m`) into milliseconds. */
export function parseWrkTime(s: string): number | null {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(s.trim());
  return m ? Number(m[1]) * TIME_UNITS_MS[m[2]!]! : null;
}

/** Parses wrk's text report (with --latency). Throws when the Requests/sec line is missing. */
export function parseWrk(output: string): WrkResult {
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  if (!rps) throw new Error(`no "Requests/sec" line in wrk output:\n${output.slice(-2000)}`);
  const total = /^\s*(\d+) requests in ([\d.]+\w+)/m.exec(output);
  const avg = /^\s*Latency\s+(\S+)\s+\S+\s+\S+/m.exec(output);
  const pct = (p: string): number | null => {
    const m = new RegExp(`^\\s*${p}%\\s+(\\S+)`, 'm').exec(output);
    return m ? parseWrkTime(m[1]!) : null;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output);
  return {
    requestsPerSec: Number(rps[1]),
    requests: total ? Number(total[1]) : 0,
    durationSec: total ? (parseWrkTime(total[2]!) ?? 0) / 1000 : 0,
    latencyAvgMs: avg ? parseWrkTime(avg[1]!) : null,
    latencyMs: { p50: pct('50'), p75: pct('75'), p90: pct('90'), p99: pct('99') },
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: sock
      ? { connect: Number(sock[1]), read: Number(sock[2]), write: Number(sock[3]), timeout: Number(sock[4]) }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

/** Failed requests of a run: error statuses plus socket errors. */
export function wrkErrors(r: WrkResult): number {
  const s = r.socketErrors;
  return r.non2xx + s.connect + s.read + s.write + s.timeout;
}

/**
 * The Lua script: POST with a JSON body whose `data.code` is unique per run, thread and
 * request, and an optional bearer token. `dataTail` (`,"key":value,...`) adds the same further
 * data keys to every request.
 */
export function wrkScript(opts: { projectId: string | null; token: string | null; tag: string; dataTail?: string }): string {
  const head = opts.projectId ? `{"project_id":${JSON.stringify(opts.projectId)},"data":{"code":"` : '{"data":{"code":"';
  const lines = [
    'counter = 0',
    'thread_no = 0',
    'local threads = 0',
    'function setup(thread)',
    '  threads = threads + 1',
    '  thread:set("thread_no", threads)',
    'end',
    'wrk.method = "POST"',
    'wrk.headers["Content-Type"] = "application/json"',
    ...(opts.token ? [`wrk.headers["Authorization"] = ${JSON.stringify(`Bearer ${opts.token}`)}`] : []),
    `local head = ${JSON.stringify(head)}`,
    `local tag = ${JSON.stringify(opts.tag)}`,
    `local tail = ${JSON.stringify(`"${opts.dataTail ?? ''}}}`)}`,
    'function request()',
    '  counter = counter + 1',
    '  return wrk.format(nil, nil, nil, head .. tag .. "_" .. thread_no .. "_" .. counter .. tail)',
    'end',
    '',
  ];
  return lines.join('\n');
}

/** Makes sure wrk is on the PATH, installing the Debian package when running as root. */
export async function ensureWrk(log: (msg: string) => void): Promise<void> {
  const found = await exec('which', ['wrk']).then(
    () => true,
    () => false,
  );
  if (found) return;
  if (process.getuid?.() !== 0) throw new Error('wrk is not installed and this is not root: install it (Debian: apt-get install -y wrk) and run again');
  log('wrk not found: installing it with apt-get');
  try {
    await exec('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], { maxBuffer: 16 << 20 });
  } catch (err) {
    throw new Error(`could not install wrk with apt-get: ${(err as Error).message}`);
  }
}

/** Runs wrk against `url` (POST creates) and parses its report. */
export async function runWrk(opts: {
  url: string;
  clients: number;
  threads: number;
  seconds: number;
  dir: string;
  name: string;
  projectId: string | null;
  token: string | null;
  dataTail?: string;
}): Promise<WrkRun> {
  const script = join(opts.dir, `${opts.name}.lua`);
  const tag = `${opts.name}_${Date.now().toString(36)}`;
  await writeFile(script, wrkScript({ projectId: opts.projectId, token: opts.token, tag, dataTail: opts.dataTail }));
  const threads = Math.min(opts.threads, opts.clients);
  const args = [`-t${threads}`, `-c${opts.clients}`, `-d${opts.seconds}s`, '--timeout', '10s', '--latency', '-s', script, opts.url];
  const r = await runMeasured('wrk', args, (opts.seconds + 60) * 1000);
  if (r.code !== 0) throw new Error(`wrk exited with ${r.code ?? r.signal}: ${r.stderr.slice(-2000)}`);
  return { ...parseWrk(r.stdout), clients: opts.clients, threads, cpuSeconds: r.cpuSeconds };
}
