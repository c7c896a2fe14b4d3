/**
 * Runs a load generator (wrk, pgbench) to completion and reports the CPU it used itself,
 * so the report can show that the generator did not eat the cores it shares with the
 * system under test. The child runs under bash, whose `times` builtin prints the CPU
 * time of finished children; that costs nothing and needs no extra tool.
 */
import { spawn } from 'node:child_process';

const MARKER = '__bench_times__';

/** What a finished command printed, its exit code and the CPU seconds it used (user + system). */
export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  cpuSeconds: number | null;
}

/** Parses one `times` figure such as `0m1.234s` or `1m02.500s` into seconds. */
function parseBashTime(s: string): number | null {
  const m = /^(\d+)m(\d+(?:\.\d+)?)s$/.exec(s.trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

/**
 * Splits what bash's `times` printed (after our marker) off stderr. Its second line holds
 * the children's user and system time.
 */
export function splitTimes(stderr: string): { stderr: string; cpuSeconds: number | null } {
  const at = stderr.lastIndexOf(MARKER);
  if (at < 0) return { stderr, cpuSeconds: null };
  const lines = stderr
    .slice(at + MARKER.length)
    .trim()
    .split('\n');
  const children = lines[1]?.trim().split(/\s+/) ?? [];
  const user = parseBashTime(children[0] ?? '');
  const sys = parseBashTime(children[1] ?? '');
  return { stderr: stderr.slice(0, at), cpuSeconds: user === null || sys === null ? null : user + sys };
}

/** Runs `cmd args` under bash, killing it after `timeoutMs`; never rejects on a non-zero exit. */
export function runMeasured(cmd: string, args: string[], timeoutMs: number, env?: NodeJS.ProcessEnv): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const script = `"$0" "$@"; rc=$?; echo ${MARKER} >&2; times >&2; exit $rc`;
    const child = spawn('bash', ['-c', script, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const split = splitTimes(stderr);
      resolve({ code, signal, stdout, stderr: split.stderr, cpuSeconds: split.cpuSeconds });
    });
  });
}
