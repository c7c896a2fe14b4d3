/**
 * ffmpeg and ffprobe for the media workers, their tests and the benchmarks: found on PATH (or at
 * FFMPEG_PATH / FFPROBE_PATH), otherwise installed from Debian's packages when running as root
 * with apt-get (`apt-get update && apt-get install -y --no-install-recommends ffmpeg`), otherwise
 * a clear error saying how to get them.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where the two binaries are. */
export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on `PATH`, or undefined. */
export function whichBinary(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    if (executable(p)) return p;
  }
  return undefined;
}

/** The binaries as configured or on PATH, without installing anything; undefined when one is missing. */
export function findFfmpeg(env: NodeJS.ProcessEnv = process.env): FfmpegPaths | undefined {
  const ffmpeg = env.FFMPEG_PATH || whichBinary('ffmpeg', env);
  const ffprobe = env.FFPROBE_PATH || whichBinary('ffprobe', env);
  if (!ffmpeg || !ffprobe || !executable(ffmpeg) || !executable(ffprobe)) return undefined;
  return { ffmpeg, ffprobe };
}

let installed: FfmpegPaths | undefined;

/**
 * Finds ffmpeg and ffprobe, installing Debian's `ffmpeg` package when they are missing and the
 * process is root on a system with apt-get. Throws with what to do otherwise.
 */
export function ensureFfmpeg(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): FfmpegPaths {
  const found = installed ?? findFfmpeg(env);
  if (found) return (installed = found);
  const canInstall = process.getuid?.() === 0 && whichBinary('apt-get', env) !== undefined;
  if (!canInstall) {
    throw new Error(
      'ffmpeg and ffprobe are needed for reviewables but were not found on PATH: install them (Debian/Ubuntu: `apt-get install ffmpeg`) or set FFMPEG_PATH and FFPROBE_PATH',
    );
  }
  log('ffmpeg: not found; installing Debian package ffmpeg with apt-get (once)');
  const aptEnv = { ...process.env, ...env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'ffmpeg']]) {
    const r = spawnSync('apt-get', args, { env: aptEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 });
    if (r.status !== 0) {
      throw new Error(
        `ffmpeg: apt-get ${args.join(' ')} failed (status ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join(' | ')}`,
      );
    }
  }
  const after = findFfmpeg(env);
  if (!after) throw new Error('ffmpeg: apt-get installed the package but ffmpeg or ffprobe is still not on PATH');
  log(`ffmpeg: installed ${after.ffmpeg}`);
  return (installed = after);
}
