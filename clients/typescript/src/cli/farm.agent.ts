/**
 * A farm agent: claims chunks of a pool, runs a command per chunk with its frames substituted,
 * heartbeats while the command runs, then completes the chunk (exit status 0) or fails it with
 * the exit status and the tail of the command's output (docs/farm.md). The command's environment is
 * the agent's without its credentials (credentials.ts): a job, submitted by anyone allowed to, must
 * not be able to print the agent's API key into its log.
 *
 * Stopping: `stop()` (the first Ctrl-C) claims nothing more and lets the running command finish
 * and be reported; `abort()` (a second Ctrl-C, or SIGTERM) stops the command and fails its chunk
 * at once, so the farm offers it again without waiting for the lease to run out.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { Conflict, NotFound, type Reelbase } from '../index.js';
import { withoutCredentials } from './credentials.js';

export interface FarmAgentOptions {
  pool: string;
  /** The command line; `{frames}`, `{first}`, `{last}`, `{job_id}`, `{chunk_id}` and `{index}` are replaced. */
  exec: string;
  worker?: string;
  kinds?: string[];
  leaseSeconds?: number;
  /** Heartbeat period (default a third of the lease, at most 30 s). */
  heartbeatMs?: number;
  /** Wait between claims when nothing is due (default 5 s). */
  pollMs?: number;
  /** Stop when nothing is due instead of waiting. */
  exitWhenIdle?: boolean;
  /** Stop after this many chunks. */
  maxChunks?: number;
  /** Bytes of the command's output kept for the report (default 4000). */
  tailBytes?: number;
  /** Where the agent says what it does, and the command's output goes. */
  log?: (line: string) => void;
  output?: (chunk: Buffer) => void;
  /** The environment commands start from (default: this process's), their credentials left out. */
  env?: NodeJS.ProcessEnv;
}

export interface ChunkOutcome {
  chunkId: string;
  jobId: string;
  frames: string | null;
  exitCode: number | null;
  signal: string | null;
  result: 'done' | 'failed' | 'lease_lost';
}

type Claimed = {
  job: { id: string; data: Record<string, unknown> };
  chunk: { id: string; index: number; frames: string | null; lease: string; attempt: number };
};

/** First and last frame of a compact frame list (`1001-1010`, `20,22,24`, `1-9x2`). */
export function frameBounds(frames: string | null): { first: string; last: string } {
  if (!frames) return { first: '', last: '' };
  const nums = frames.split(/[,\-x]/).filter(Boolean);
  const parts = frames.split(',');
  const first = parts[0]!.split('-')[0]!;
  const lastPart = parts[parts.length - 1]!.split('x')[0]!;
  const last = lastPart.includes('-') ? lastPart.split('-')[1]! : lastPart;
  return nums.length ? { first, last } : { first: '', last: '' };
}

/** The command line for a chunk. Frame lists hold only digits, `,`, `-` and `x`: nothing a shell would act on. */
export function commandFor(template: string, claimed: Claimed): string {
  const frames = claimed.chunk.frames ?? '';
  if (!/^[0-9,x-]*$/.test(frames)) throw new Error(`refusing a frame list with unexpected characters: ${JSON.stringify(frames)}`);
  const { first, last } = frameBounds(claimed.chunk.frames);
  const values: Record<string, string> = {
    frames,
    first,
    last,
    job_id: claimed.job.id,
    chunk_id: claimed.chunk.id,
    index: String(claimed.chunk.index),
  };
  return template.replace(/\{(frames|first|last|job_id|chunk_id|index)\}/g, (_, k: string) => values[k]!);
}

/** Keeps the last `max` bytes of a stream. */
export class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size - this.chunks[0]!.length >= this.max) this.size -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.max)).toString('utf8');
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

export class FarmAgent {
  private readonly stopping = new AbortController();
  private readonly aborting = new AbortController();
  readonly worker: string;
  readonly outcomes: ChunkOutcome[] = [];

  constructor(
    private readonly rb: Reelbase,
    private readonly o: FarmAgentOptions,
  ) {
    this.worker = o.worker ?? `${hostname()}:${process.pid}`;
  }

  /** Claim nothing more; the running command finishes and is reported. */
  stop(): void {
    this.stopping.abort();
  }

  /** Stop the running command now and fail its chunk. */
  abort(): void {
    this.stopping.abort();
    this.aborting.abort();
  }

  private log(line: string): void {
    this.o.log?.(line);
  }

  /** Runs until stopped, idle (with `exitWhenIdle`) or `maxChunks` chunks are done. */
  async run(): Promise<ChunkOutcome[]> {
    this.log(`agent ${this.worker} on pool ${this.o.pool}`);
    while (!this.stopping.signal.aborted) {
      if (this.o.maxChunks !== undefined && this.outcomes.length >= this.o.maxChunks) break;
      const claimed = (await this.rb.call('post', '/farm/claim', {
        body: { pool: this.o.pool, worker: this.worker, ...(this.o.kinds?.length ? { kinds: this.o.kinds } : {}), lease_seconds: this.o.leaseSeconds ?? 300 },
      })) as Claimed | undefined;
      if (!claimed || !claimed.chunk) {
        if (this.o.exitWhenIdle) break;
        await sleep(this.o.pollMs ?? 5000, this.stopping.signal);
        continue;
      }
      this.outcomes.push(await this.work(claimed));
    }
    return this.outcomes;
  }

  private async work(claimed: Claimed): Promise<ChunkOutcome> {
    const { chunk, job } = claimed;
    const base = { chunkId: chunk.id, jobId: job.id, frames: chunk.frames };
    let line: string;
    try {
      line = commandFor(this.o.exec, claimed);
    } catch (err) {
      await this.rb.call('post', '/farm/chunks/{id}/fail', { params: { id: chunk.id }, body: { lease: chunk.lease, error: (err as Error).message } });
      return { ...base, exitCode: null, signal: null, result: 'failed' };
    }
    this.log(`chunk ${chunk.index} of job ${job.id} (frames ${chunk.frames ?? '-'}, attempt ${chunk.attempt}): ${line}`);
    const tail = new Tail(this.o.tailBytes ?? 4000);
    const child = spawn(line, {
      shell: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // A job is anybody's who may submit one: the agent's own key stays with the agent.
      env: {
        ...withoutCredentials(this.o.env ?? process.env),
        REELBASE_FARM_JOB_ID: job.id,
        REELBASE_FARM_CHUNK_ID: chunk.id,
        REELBASE_FARM_CHUNK_INDEX: String(chunk.index),
        REELBASE_FARM_FRAMES: chunk.frames ?? '',
        REELBASE_FARM_PAYLOAD: JSON.stringify(job.data.payload ?? null),
      },
      detached: process.platform !== 'win32',
    });
    const onOutput = (b: Buffer) => {
      tail.push(b);
      this.o.output?.(b);
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);

    let leaseLost = false;
    const kill = (sig: NodeJS.Signals) => {
      try {
        // The whole process group: a shell's children too.
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch {
        // already gone
      }
    };
    const heartbeatMs = this.o.heartbeatMs ?? Math.min(30_000, ((this.o.leaseSeconds ?? 300) * 1000) / 3);
    const beat = setInterval(() => {
      this.rb.call('post', '/farm/chunks/{id}/heartbeat', { params: { id: chunk.id }, body: { lease: chunk.lease } }).catch((err: unknown) => {
        if (err instanceof Conflict || err instanceof NotFound) {
          // Claimed again elsewhere, or the job was cancelled: this run no longer counts.
          leaseLost = true;
          this.log(`chunk ${chunk.index}: lease lost (${(err as Conflict).code}); stopping the command`);
          kill('SIGTERM');
        } else this.log(`chunk ${chunk.index}: heartbeat failed: ${(err as Error).message}`);
      });
    }, heartbeatMs);
    const onAbort = () => kill('SIGTERM');
    this.aborting.signal.addEventListener('abort', onAbort, { once: true });

    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('error', (err) => {
        tail.push(Buffer.from(`\n${err.message}\n`));
        resolve({ code: 127, signal: null });
      });
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    });
    clearInterval(beat);
    this.aborting.signal.removeEventListener('abort', onAbort);
    if (leaseLost) return { ...base, exitCode: code, signal, result: 'lease_lost' };

    const output = tail.text();
    try {
      if (code === 0 && !this.aborting.signal.aborted) {
        await this.rb.call('post', '/farm/chunks/{id}/complete', {
          params: { id: chunk.id },
          body: { lease: chunk.lease, output: { exit_code: 0, worker: this.worker, log_tail: output } },
        });
        this.log(`chunk ${chunk.index}: done`);
        return { ...base, exitCode: code, signal, result: 'done' };
      }
      const why = this.aborting.signal.aborted ? 'the agent was stopped' : signal ? `killed by ${signal}` : `exit status ${code}`;
      await this.rb.call('post', '/farm/chunks/{id}/fail', {
        params: { id: chunk.id },
        body: { lease: chunk.lease, error: `${why}\n${output}`.slice(0, 8000) },
      });
      this.log(`chunk ${chunk.index}: failed (${why})`);
      return { ...base, exitCode: code, signal, result: 'failed' };
    } catch (err) {
      if (err instanceof Conflict) {
        this.log(`chunk ${chunk.index}: lease lost before the report (${err.code})`);
        return { ...base, exitCode: code, signal, result: 'lease_lost' };
      }
      throw err;
    }
  }
}
