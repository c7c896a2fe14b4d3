import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Client } from 'minio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3StandIn, type S3StandIn } from '../src/s3.standin.js';

const MiB = 1024 * 1024;

/** A deterministic stream of `size` bytes that never reveals its length (no size for the client). */
function generated(size: number, seed: number): { stream: Readable; sha256: () => string } {
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const n = Math.min(MiB, size - sent);
      const chunk = Buffer.alloc(n, (seed + sent / MiB) % 251);
      chunk.writeUInt32BE(sent >>> 0, 0);
      hash.update(chunk);
      sent += n;
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex') };
}

async function sha256Of(stream: Readable): Promise<{ sha: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha: hash.digest('hex'), bytes };
}

describe('S3 stand-in (s3rver + ListMultipartUploads)', () => {
  let dir: string;
  let s3: S3StandIn;
  const client = (partSize?: number) =>
    new Client({
      endPoint: s3.host,
      port: s3.port,
      useSSL: false,
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      region: s3.region,
      pathStyle: true,
      ...(partSize ? { partSize } : {}),
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rb-s3-'));
    s3 = await startS3StandIn({ dataDir: dir, port: 0 });
  });
  afterAll(async () => {
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('listens on a free port with the bucket configured', async () => {
    expect(s3.port).toBeGreaterThan(0);
    expect(s3.directory).toBe(join(dir, 's3'));
    expect(await client().bucketExists('reelbase-media')).toBe(true);
  });

  it('answers GET /<bucket>?uploads with an empty ListMultipartUploadsResult', async () => {
    const res = await fetch(`${s3.endpoint}/reelbase-media?uploads&prefix=a%2Fb`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('<ListMultipartUploadsResult');
    expect(body).toContain('<Prefix>a/b</Prefix>');
    expect(body).not.toContain('<Upload>');
  });

  it('stores an unknown-size stream in several parts (small part size) and reads it back', async () => {
    const src = generated(12 * MiB + 123, 7);
    const c = client(5 * MiB);
    await c.putObject('reelbase-media', 'originals/small-parts.bin', src.stream);
    const stat = await c.statObject('reelbase-media', 'originals/small-parts.bin');
    expect(stat.size).toBe(12 * MiB + 123);
    const back = await sha256Of(await c.getObject('reelbase-media', 'originals/small-parts.bin'));
    expect(back.bytes).toBe(12 * MiB + 123);
    expect(back.sha).toBe(src.sha256());
  });

  it('stores a 70 MiB unknown-size stream with the default client (above the 64 MiB part size)', async () => {
    const size = 70 * MiB;
    const src = generated(size, 3);
    const c = client();
    await c.putObject('reelbase-media', 'originals/big.bin', src.stream, undefined, { 'content-type': 'video/mp4' });
    const stat = await c.statObject('reelbase-media', 'originals/big.bin');
    expect(stat.size).toBe(size);
    expect(stat.metaData['content-type']).toBe('video/mp4');
    const back = await sha256Of(await c.getObject('reelbase-media', 'originals/big.bin'));
    expect(back.bytes).toBe(size);
    expect(back.sha).toBe(src.sha256());
  }, 120_000);
});
