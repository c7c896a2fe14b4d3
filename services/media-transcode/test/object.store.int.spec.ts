/**
 * ObjectStore against the S3 stand-in, through a proxy that counts the requests. putFile: an
 * output up to SINGLE_PUT_MAX_BYTES is one PUT, a larger one a multipart upload. putStream: one
 * PUT for anything that fits its first buffer (one part, or the declared size up to
 * SINGLE_PUT_MAX_BYTES), parts beyond it, whatever the hint said. Everything reads back byte for byte.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startS3StandIn, type S3StandIn } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStore, SINGLE_PUT_MAX_BYTES } from '../src/objects/object.store.js';

describe('ObjectStore', () => {
  let dir: string;
  let s3: S3StandIn;
  let store: ObjectStore;
  let proxy: Server;
  /** Requests that reached the store, as `METHOD query`. */
  const seen: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reelbase-object-store-'));
    s3 = await startS3StandIn({ dataDir: dir });
    // Headers pass unchanged (Host included), so the stand-in checks the client's signature as made.
    proxy = createServer((req, res) => {
      seen.push(`${req.method} ${new URL(req.url ?? '/', 'http://x').search}`);
      const up = request({ host: s3.host, port: s3.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    store = new ObjectStore({
      S3_ENDPOINT: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      S3_ACCESS_KEY: s3.accessKey,
      S3_SECRET_KEY: s3.secretKey,
      S3_BUCKET: s3.bucket,
      S3_REGION: s3.region,
      S3_PART_BYTES: 5 * 1024 * 1024,
      S3_TIMEOUT_MS: 10_000,
    });
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const roundTrip = async (name: string, bytes: number) => {
    const data = randomBytes(bytes);
    const file = join(dir, `${name}.bin`);
    await writeFile(file, data);
    seen.length = 0;
    expect(await store.putFile(`rv/test/${name}`, file, 'video/mp4')).toBe(bytes);
    const requests = [...seen];
    const back = join(dir, `${name}.back`);
    await store.download(`rv/test/${name}`, back);
    expect((await readFile(back)).equals(data)).toBe(true);
    return requests;
  };

  const MiB = 1024 * 1024;
  /** Stores `bytes` streamed in uneven pieces, declaring `hint`; the requests it took. */
  const streamed = async (name: string, bytes: number, hint?: number) => {
    const data = randomBytes(bytes);
    const pieces: Buffer[] = [];
    for (let at = 0, step = 1; at < bytes; at += step, step = (step * 7 + 65_537) % (700 * 1024) || 1) pieces.push(data.subarray(at, at + step));
    seen.length = 0;
    await store.putStream(`rv/test/${name}`, Readable.from(pieces), 'video/mp4', hint);
    const requests = [...seen];
    const back = join(dir, `${name}.back`);
    await store.download(`rv/test/${name}`, back);
    expect((await readFile(back)).equals(data)).toBe(true);
    return requests;
  };
  const multipart = (requests: string[]) => requests.includes('POST ?uploads') && requests.some((r) => r.startsWith('PUT ?partNumber='));

  it('putStream: one request for a file that just fills a part, parts for one byte more', async () => {
    expect(await streamed('exact', 5 * MiB)).toEqual(['PUT ']);
    expect(multipart(await streamed('over', 5 * MiB + 1))).toBe(true);
  });

  it('putStream: one request for a declared size over one part, up to SINGLE_PUT_MAX_BYTES', async () => {
    expect(await streamed('declared', 6 * MiB, 6 * MiB)).toEqual(['PUT ']);
    expect(await streamed('declared-max', SINGLE_PUT_MAX_BYTES, SINGLE_PUT_MAX_BYTES)).toEqual(['PUT ']);
    // Without the declared size the same file is a multipart upload.
    expect(multipart(await streamed('undeclared', 6 * MiB))).toBe(true);
    // Declared beyond the single-request size: parts as for an unknown size.
    expect(multipart(await streamed('declared-big', 6 * MiB, SINGLE_PUT_MAX_BYTES + 1))).toBe(true);
  });

  it('putStream: a wrong declared size still stores every byte', async () => {
    // More bytes than declared go on as further parts; fewer still make one request.
    expect(multipart(await streamed('more', 13 * MiB, 6 * MiB))).toBe(true);
    expect(await streamed('fewer', 2 * MiB, 6 * MiB)).toEqual(['PUT ']);
  });

  it('putFile: a proxy larger than one part in a single request', async () => {
    // 6 MiB: more than S3_PART_BYTES, so the client's putObject would have gone multipart.
    expect(await roundTrip('proxy', 6 * 1024 * 1024)).toEqual(['PUT ']);
  });

  it('putFile: a file over the single-request size as a multipart upload', async () => {
    const requests = await roundTrip('large', SINGLE_PUT_MAX_BYTES + 1);
    expect(requests).toContain('POST ?uploads');
    expect(requests.filter((r) => r.startsWith('PUT ?partNumber=')).length).toBeGreaterThanOrEqual(1);
  });
});
