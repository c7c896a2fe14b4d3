/**
 * Runs ffmpeg and ffprobe as child processes with a wall-clock limit: past it (or on abort) the
 * process is killed with SIGKILL. Only the tail of stderr is kept, so a chatty or hostile input
 * cannot grow the worker's memory. A failed run becomes a {@link TranscodeFailure} with a
 * readable reason; the raw tail goes to the log only.
 */
import { spawn } from 'node:child_process';
import { reasonFromStderr, TranscodeFailure } from '../domain/transcode.failure.js';
import type { ProbeJson } from '../domain/probe.rules.js';
import type { ToolRun, TranscodeTools } from '../domain/ports.js';
import { INPUT } from '../domain/transcode.plan.js';

const STDERR_TAIL = 8 * 1024;
const STDOUT_MAX = 4 * 1024 * 1024;

/** The outcome of a run that exited 0. */
export interface RunResult {
  stdout: string;
  stderrTail: string;
}

/** Why a run did not succeed, for the log (the user sees `TranscodeFailure.message`). */
export class ToolFailure extends TranscodeFailure {
  constructor(
    reason: string,
    readonly stderrTail: string,
    readonly exit: string,
  ) {
    super(reason);
  }
}

/** Runs `bin args`; resolves on exit 0, rejects with {@link ToolFailure} otherwise. */
export function runTool(tool: 'ffmpeg' | 'ffprobe', bin: string, args: string[], opts: ToolRun): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(opts.signal.reason as Error);
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stdoutBytes = 0;
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdoutBytes += d.length;
      if (stdoutBytes <= STDOUT_MAX) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-STDERR_TAIL);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    const onAbort = () => child.kill('SIGKILL');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new Error(`${tool} could not be started (${bin}): ${err.message}`));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(opts.signal.reason as Error);
      if (timedOut) {
        return reject(new ToolFailure(`converting took longer than the ${Math.round(opts.timeoutMs / 1000)} s limit and was stopped`, stderr, 'timeout'));
      }
      if (code === 0) return resolve({ stdout, stderrTail: stderr });
      reject(new ToolFailure(reasonFromStderr(tool, stderr), stderr, sig ? `signal ${sig}` : `exit ${code}`));
    });
  });
}

/** ffprobe's view of `file` (format and streams), bounded like any run, read only as {@link INPUT} allows. */
export async function probeFile(ffprobe: string, file: string, opts: ToolRun): Promise<ProbeJson> {
  const { stdout } = await runTool(
    'ffprobe',
    ffprobe,
    ['-hide_banner', '-v', 'error', ...INPUT, '-print_format', 'json', '-show_format', '-show_streams', file],
    opts,
  );
  try {
    return JSON.parse(stdout) as ProbeJson;
  } catch {
    throw new TranscodeFailure('the file is not a video or image format that can be decoded');
  }
}

/** The worker's {@link TranscodeTools}: the configured binaries (FFMPEG_PATH, FFPROBE_PATH). */
export class FfmpegTools implements TranscodeTools {
  constructor(private readonly bins: { ffmpeg: string; ffprobe: string }) {}

  probe(file: string, run: ToolRun): Promise<ProbeJson> {
    return probeFile(this.bins.ffprobe, file, run);
  }

  async ffmpeg(args: string[], run: ToolRun): Promise<void> {
    await runTool('ffmpeg', this.bins.ffmpeg, args, run);
  }

  failureDetail(err: unknown): { exit: string; stderr: string } | undefined {
    return err instanceof ToolFailure ? { exit: err.exit, stderr: err.stderrTail.slice(-1000) } : undefined;
  }
}
