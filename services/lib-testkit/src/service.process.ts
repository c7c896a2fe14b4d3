/**
 * One supervised service process of the local stack: spawns `node --expose-gc services/<name>/dist/main.js`,
 * routes its output (prefixed lines on stdout, or a log file), keeps the last lines for error
 * reports, and restarts it with backoff when it exits unexpectedly — always loudly, never
 * silently — until it crashes too often, when the whole stack is told to give up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { httpStatus, sleep } from './ports.js';

export interface ServiceProcessOptions {
  name: string;
  mainPath: string;
  /** Ops or gateway port serving /readyz. */
  httpPort: number;
  /** The child's whole environment for one start, given the extra env of the last restart(). */
  env: (extraEnv: Record<string, string>) => Record<string, string>;
  /** Append output here instead of printing it prefixed on stdout. */
  logFile?: string;
  /** Width the name is padded to in prefixed output. */
  prefixWidth?: number;
  /** Called once when the service is given up on (crash loop or configuration error). */
  onGiveUp: (name: string, reason: string) => void;
  maxCrashes?: number;
  crashWindowMs?: number;
  stopTimeoutMs?: number;
}

const TAIL_LINES = 200;
/**
 * Preloaded into every service: it stops itself should the stack vanish (parent.watch.ts). Built
 * beside this file; from the sources (tests run them directly) it is the built one in dist/.
 */
const PARENT_WATCH = [new URL('./parent.watch.js', import.meta.url), new URL('../dist/parent.watch.js', import.meta.url)].find((u) =>
  existsSync(fileURLToPath(u)),
);
/**
 * node's flags for every service process, the same as the image's CMD and the chart's worker
 * command (docs/operations.md, "Processes"): `--expose-gc` lets a service collect the Buffers of
 * a byte stream early (lib-platform `memory/stream.gc.ts`, docs/media.md "Memory").
 */
export const SERVICE_NODE_FLAGS = ['--expose-gc'];
/**
 * `REELBASE_CPU_PROF_DIR`: every service writes a V8 CPU profile there when it exits (bench/README.md,
 * "Profiling the stack"); Node refuses `--cpu-prof` in NODE_OPTIONS, so it is passed as a flag.
 */
const profileFlags = (): string[] => (process.env.REELBASE_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.REELBASE_CPU_PROF_DIR}`] : []);
/** Status 78 (EX_CONFIG) is how services report bad configuration: restarting cannot help. */
const EXIT_CONFIG = 78;

/** Signals the child's whole process group (it is started as its leader); no error when it is gone. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with status ${code}`;
}

export class ServiceProcess {
  readonly name: string;
  private child: ChildProcess | undefined;
  /** Settles when the current child has exited and its output is drained. */
  private closed: Promise<void> = Promise.resolve();
  private expected = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private crashes: number[] = [];
  private tail: string[] = [];
  private log: WriteStream | undefined;
  private extraEnv: Record<string, string> = {};
  private lastExit = 'not started';
  /** Set once the service was given up on; cleared by an explicit restart(). */
  gaveUp: string | null = null;

  constructor(private readonly opts: ServiceProcessOptions) {
    this.name = opts.name;
    if (opts.logFile) {
      mkdirSync(dirname(opts.logFile), { recursive: true });
      this.log = createWriteStream(opts.logFile, { flags: 'a' });
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The last `n` output lines, for error messages. */
  tailText(n = 25): string {
    const lines = this.tail.slice(-n);
    return lines.length ? lines.join('\n') : '(no output)';
  }

  /** Spawns the process (supervised from now on). */
  start(): void {
    if (this.child) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.expected = false;
    const child = spawn(
      process.execPath,
      [...SERVICE_NODE_FLAGS, ...profileFlags(), ...(PARENT_WATCH ? ['--import', PARENT_WATCH.href] : []), this.opts.mainPath],
      {
        env: this.opts.env(this.extraEnv),
        stdio: ['ignore', 'pipe', 'pipe'],
        // Own process group: a Ctrl-C in the terminal reaches only the stack, which then
        // stops the services in order instead of racing them.
        detached: true,
      },
    );
    this.child = child;
    this.write(`---- ${new Date().toISOString()} started ${this.name} (pid ${child.pid}) ----`, false);
    this.pipeLines(child.stdout!);
    this.pipeLines(child.stderr!);
    // 'close' (not 'exit') so the last lines are in the tail before a crash is reported.
    this.closed = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.onExit(child, code, signal);
        resolve();
      }),
    );
    child.once('error', (err) => this.write(`[stack] could not start ${this.name}: ${err.message}`));
  }

  /** Stops the process (SIGTERM, then SIGKILL after the timeout); it stays down. */
  async stop(timeoutMs = this.opts.stopTimeoutMs ?? 15_000): Promise<void> {
    await this.kill('SIGTERM', timeoutMs);
  }

  /** Sends `signal` as an expected stop (no restart) and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = this.opts.stopTimeoutMs ?? 15_000): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.expected = true;
    const child = this.child;
    if (!child) return;
    const closed = this.closed;
    child.kill(signal);
    const timer = setTimeout(() => {
      this.write(`[stack] ${this.name} did not stop within ${Math.round(timeoutMs / 1000)} s; killing it`, false);
      killGroup(child, 'SIGKILL');
    }, timeoutMs);
    await closed;
    clearTimeout(timer);
    // Whatever the service started in its process group goes with it.
    killGroup(child, 'SIGKILL');
  }

  /** Stops and starts again with `extraEnv` (replacing that of an earlier restart), then waits until ready. */
  async restart(extraEnv: Record<string, string> = {}, readyTimeoutMs?: number): Promise<void> {
    await this.stop();
    this.extraEnv = { ...extraEnv };
    this.gaveUp = null;
    this.crashes = [];
    this.start();
    await this.waitReady(readyTimeoutMs);
  }

  /** Resolves once /readyz answers 200; rejects naming the service and its last lines otherwise, or when `signal` aborts. */
  async waitReady(timeoutMs = 60_000, signal?: AbortSignal): Promise<void> {
    const url = `http://127.0.0.1:${this.opts.httpPort}/readyz`;
    const deadline = Date.now() + timeoutMs;
    let last: number | null = null;
    for (;;) {
      if (signal?.aborted) throw new Error('the start was cancelled');
      if (this.gaveUp) throw new Error(`${this.name} is down: ${this.gaveUp}\n${this.name}'s last log lines:\n${this.tailText()}`);
      if (!this.child && !this.restartTimer) {
        throw new Error(`${this.name} is not running (${this.lastExit})\n${this.name}'s last log lines:\n${this.tailText()}`);
      }
      last = await httpStatus(url, 2000);
      if (last === 200) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${this.name} was not ready within ${Math.round(timeoutMs / 1000)} s (GET ${url} → ${last ?? 'no answer'})\n` +
            `${this.name}'s last log lines:\n${this.tailText()}`,
        );
      }
      await sleep(150);
    }
  }

  /** Closes the log file (after the last stop). */
  close(): void {
    this.log?.end();
  }

  /** Sends SIGKILL without waiting: for process-exit hooks only. */
  killNow(): void {
    this.expected = true;
    clearTimeout(this.restartTimer);
    if (this.child) killGroup(this.child, 'SIGKILL');
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = undefined;
    this.lastExit = describeExit(code, signal);
    this.write(`---- ${new Date().toISOString()} ${this.name} (pid ${child.pid}) ${this.lastExit} ----`, false);
    if (this.expected) return;
    const now = Date.now();
    const windowMs = this.opts.crashWindowMs ?? 60_000;
    const max = this.opts.maxCrashes ?? 5;
    this.crashes = this.crashes.filter((t) => now - t < windowMs);
    this.crashes.push(now);
    let next: string;
    let giveUp: string | null = null;
    if (code === EXIT_CONFIG) giveUp = `${this.lastExit} (configuration error; see the lines above)`;
    else if (this.crashes.length >= max) giveUp = `crashed ${this.crashes.length} times within ${windowMs / 1000} s`;
    if (giveUp) {
      next = `giving up: ${giveUp}; stopping the stack`;
    } else {
      const delay = Math.min(250 * 2 ** (this.crashes.length - 1), 5000);
      next = `restarting in ${delay} ms (crash ${this.crashes.length} of ${max} allowed within ${windowMs / 1000} s)`;
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        this.start();
      }, delay);
    }
    this.banner(`SERVICE CRASHED: ${this.name} (pid ${child.pid}) ${this.lastExit}`, next);
    if (giveUp) {
      this.gaveUp = giveUp;
      this.opts.onGiveUp(this.name, giveUp);
    }
  }

  private banner(title: string, next: string): void {
    const bar = '!'.repeat(78);
    const body = this.tailText(15)
      .split('\n')
      .map((l) => `!!   ${l}`);
    process.stderr.write(
      [bar, `!! ${title}`, `!! ${next}`, ...(this.log ? [`!! log: ${this.opts.logFile}`] : []), `!! last log lines:`, ...body, bar, ''].join('\n'),
    );
  }

  private pipeLines(stream: Readable): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) this.write(line);
    });
    stream.on('end', () => {
      if (partial) this.write(partial);
      partial = '';
    });
  }

  private write(line: string, keep = true): void {
    if (keep) {
      this.tail.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
      if (this.tail.length > TAIL_LINES) this.tail.shift();
    }
    if (this.log) this.log.write(`${line}\n`);
    else process.stdout.write(`${this.name.padEnd(this.opts.prefixWidth ?? 8)} | ${line}\n`);
  }
}
