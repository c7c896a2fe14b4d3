/**
 * The media integration tests' world: a throwaway database, a NATS prefix, the S3 stand-in, the
 * records stand-in, the api and workers in-process (or a worker as a child process), clips made
 * by ffmpeg at test time, and a client for the media gRPC API.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGrpcClient, createLogger, newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { mediav1 } from '@reelbase/proto';
import {
  createTestDatabase,
  deleteStreams,
  ensureFfmpeg,
  SERVICE_NODE_FLAGS,
  startS3StandIn,
  TEST_INTERNAL_AUTH_SECRET,
  uniquePrefix,
  type FfmpegPaths,
  type S3StandIn,
  type TestDatabase,
} from '@reelbase/lib-testkit';
import { parseMediaApiConfig, parseMediaWorkerConfig, startMediaApi, startMediaWorker, type RunningMediaApi, type RunningMediaWorker } from '../src/index.js';
import { startFakeRecords, type FakeRecords } from './fake-records.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const WORKER_MAIN = resolve(HERE, '../dist/worker.main.js');

export const artist: CallContext = { requestId: 'media-test', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };

export interface World {
  dir: string;
  db: TestDatabase;
  prefix: string;
  s3: S3StandIn;
  records: FakeRecords;
  ff: FfmpegPaths;
  env: Record<string, string>;
  api: RunningMediaApi;
  workers: RunningMediaWorker[];
  client: GrpcClient<mediav1.MediaServiceClient>;
  startWorker(extra?: Record<string, string>): Promise<RunningMediaWorker>;
  /** A worker as its own process (dist/worker.main.js), so a test can SIGKILL it. */
  spawnWorker(extra?: Record<string, string>): ChildProcess;
  close(): Promise<void>;
}

/** Starts everything but the workers (add them with startWorker / spawnWorker). */
export async function startWorld(extra: Record<string, string> = {}): Promise<World> {
  const ff = ensureFfmpeg();
  const dir = mkdtempSync(join(tmpdir(), 'reelbase-media-test-'));
  const db = await createTestDatabase();
  const prefix = uniquePrefix('media');
  const s3 = await startS3StandIn({ dataDir: dir });
  const records = await startFakeRecords();
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: db.url,
    NATS_PREFIX: prefix,
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    BIND_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    RECORDS_ADDR: `127.0.0.1:${records.port}`,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_BUCKET: s3.bucket,
    S3_REGION: s3.region,
    S3_TIMEOUT_MS: '4000',
    SWEEP_INTERVAL_MS: '200',
    SWEEP_GRACE_MS: '300',
    FFMPEG_PATH: ff.ffmpeg,
    FFPROBE_PATH: ff.ffprobe,
    TRANSCODE_THREADS: '1',
    TRANSCODE_ACK_WAIT_MS: '2000',
    TRANSCODE_RETRY_DELAY_MS: '100',
    TRANSCODE_LAG_REFRESH_MS: '200',
    TRANSCODE_TMP_DIR: dir,
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...extra,
  };
  const api = await startMediaApi(parseMediaApiConfig(env), createLogger('media-transcode', env.LOG_LEVEL as 'silent'));
  const client = createGrpcClient(mediav1.MediaServiceClient, mediav1.MediaServiceService, {
    name: 'media',
    address: `127.0.0.1:${api.grpcPort}`,
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    streamIdleMs: 10_000,
  });
  const workers: RunningMediaWorker[] = [];
  const children: ChildProcess[] = [];
  return {
    dir,
    db,
    prefix,
    s3,
    records,
    ff,
    env,
    api,
    workers,
    client,
    async startWorker(more = {}) {
      const e = { ...env, ...more };
      const w = await startMediaWorker(parseMediaWorkerConfig(e), createLogger('media-worker', e.LOG_LEVEL as 'silent'));
      workers.push(w);
      return w;
    },
    spawnWorker(more = {}) {
      const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, WORKER_MAIN], {
        env: { ...process.env, ...env, ...more },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    },
    async close() {
      client.close();
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.stop()));
      await api.stop();
      await records.stop();
      await s3.stop().catch(() => {});
      await deleteStreams(prefix);
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs ffmpeg to make a test input; returns its path. */
export function makeClip(ff: FfmpegPaths, dir: string, name: string, args: string[]): string {
  const out = join(dir, name);
  const r = spawnSync(ff.ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', ...args, out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffmpeg could not make ${name}: ${r.stderr}`);
  return out;
}

/** The clips of the tests, tiny and short. */
export function clips(ff: FfmpegPaths, dir: string) {
  const mp4 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  return {
    withAudio: () =>
      makeClip(ff, dir, 'with-audio.mp4', [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x240:rate=25',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=44100',
        '-t',
        '1.5',
        ...mp4,
        '-c:a',
        'aac',
        '-shortest',
      ]),
    noAudio: () => makeClip(ff, dir, 'no-audio.mov', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', '1', ...mp4, '-f', 'mov']),
    oddSize: () => makeClip(ff, dir, 'odd.mkv', ['-f', 'lavfi', '-i', 'testsrc=size=321x241:rate=25', '-t', '1', '-c:v', 'ffv1']),
    uhd: () => makeClip(ff, dir, 'uhd.mp4', ['-f', 'lavfi', '-i', 'testsrc2=size=3840x2160:rate=25', '-frames:v', '3', ...mp4]),
    still: () => makeClip(ff, dir, 'still.png', ['-f', 'lavfi', '-i', 'testsrc=size=800x600', '-frames:v', '1']),
    long: (seconds: number) => makeClip(ff, dir, `long-${seconds}.mp4`, ['-f', 'lavfi', '-i', `testsrc=size=320x240:rate=25`, '-t', String(seconds), ...mp4]),
    garbage: () => writeTo(dir, 'garbage.mp4', randomBytes(64 * 1024)),
    empty: () => writeTo(dir, 'empty.mov', Buffer.alloc(0)),
    text: () => writeTo(dir, 'notes.mov', Buffer.from('These are my notes for the review, not a movie.\n'.repeat(50))),
    truncated: () => {
      // moov at the end (no faststart), cut in half: the index never arrives.
      const full = makeClip(ff, dir, 'full.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-t', '2', ...mp4]);
      const b = readFileSync(full);
      return writeTo(dir, 'truncated.mp4', b.subarray(0, Math.floor(b.length / 2)));
    },
    claimsHours: () => {
      const src = makeClip(ff, dir, 'short-claim.mp4', ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '1', ...mp4, '-movflags', '+faststart']);
      return writeTo(dir, 'claims-hours.mp4', claimDuration(readFileSync(src), 10 * 3600));
    },
  };
}

function writeTo(dir: string, name: string, b: Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, b);
  return p;
}

/** Rewrites the movie header (`mvhd`, version 0) so the file claims to last `seconds`. */
export function claimDuration(mp4: Buffer, seconds: number): Buffer {
  const b = Buffer.from(mp4);
  const i = b.indexOf('mvhd');
  if (i < 0 || b[i + 4] !== 0) throw new Error('no version-0 mvhd box');
  const timescale = b.readUInt32BE(i + 16);
  b.writeUInt32BE(Math.min(0xfffffff0, timescale * seconds), i + 20);
  return b;
}

/** Uploads `file` through the client stream in `chunkBytes` pieces; resolves with the answer. */
export async function upload(
  w: World,
  versionId: string,
  file: string,
  opts: { contentType?: string; fileName?: string; chunkBytes?: number; declared?: boolean; ctx?: CallContext } = {},
): Promise<mediav1.UploadReviewableResponse> {
  const body = readFileSync(file);
  const call = w.client.clientStream('uploadReviewable', opts.ctx ?? artist);
  await call.write({
    payload: {
      $case: 'header',
      value: {
        versionId,
        fileName: opts.fileName ?? file.slice(file.lastIndexOf('/') + 1),
        contentType: opts.contentType ?? 'video/mp4',
        declaredSize: opts.declared ? body.length : 0,
      },
    },
  });
  const size = opts.chunkBytes ?? 64 * 1024;
  for (let i = 0; i < body.length; i += size) await call.write({ payload: { $case: 'chunk', value: body.subarray(i, i + size) } });
  return call.end();
}

/** Polls GetReviewable until the status is done or failed. */
export async function waitFinished(w: World, versionId: string, timeoutMs = 60_000): Promise<mediav1.GetReviewableResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await w.client.call.getReviewable({ versionId }, artist);
    if (r.status === 'done' || r.status === 'failed') return r;
    if (Date.now() > deadline) throw new Error(`reviewable of ${versionId} still ${r.status} after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Reads a whole media object through ReadMedia. */
export async function readMedia(w: World, key: string, range?: [number, number]): Promise<{ info: mediav1.MediaInfo; body: Buffer }> {
  let info: mediav1.MediaInfo | undefined;
  const parts: Buffer[] = [];
  for await (const m of w.client.serverStream(
    'readMedia',
    { key, hasRange: range !== undefined, rangeStart: range?.[0] ?? 0, rangeEnd: range?.[1] ?? 0 },
    artist,
  )) {
    if (m.payload?.$case === 'info') info = m.payload.value;
    else if (m.payload?.$case === 'data') parts.push(Buffer.from(m.payload.value));
  }
  return { info: info!, body: Buffer.concat(parts) };
}

/** ffprobe's streams and format of a local file. */
export function probe(ff: FfmpegPaths, file: string) {
  const r = spawnSync(ff.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffprobe failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as {
    streams: { codec_type: string; codec_name: string; width?: number; height?: number; pix_fmt?: string; channels?: number }[];
    format: { format_name: string; duration?: string };
  };
}

/** Writes a buffer to a fresh file in `dir`. */
export function saveTo(dir: string, name: string, b: Buffer): string {
  return writeTo(dir, name, b);
}
