/**
 * Reviewables end to end, through the gateway of the whole stack (media api and one worker,
 * the local S3 stand-in, ffmpeg): a multipart video and a raw image upload end `done` with
 * outputs ffprobe confirms and are served by key; a text file named `.mov` ends `failed` with a
 * reason and no 5xx; 404/413/415/422 before or while reading; hostile keys over real HTTP are
 * 400 and never served; Range cases on a real proxy; and the object store going down makes an
 * upload 503 quickly, leaving no reviewable pending.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ensureFfmpeg, startS3StandIn, type S3StandIn } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';

const MAX = 3 * 1024 * 1024;
const BOUNDARY = 'e2eBoundary7MA4YWxkTrZu0gW';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe('reviewables and media (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let s3: S3StandIn;
  let dir: string;
  let ff: { ffmpeg: string; ffprobe: string };
  let projectId: string;
  const files: Record<string, Buffer> = {};

  const ffmpeg = (...args: string[]) => {
    const r = spawnSync(ff.ffmpeg, ['-v', 'error', '-y', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${r.stderr}`);
  };
  const probe = (data: Buffer, name: string): any => {
    const path = join(dir, name);
    writeFileSync(path, data);
    const r = spawnSync(ff.ffprobe, ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', path], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ffprobe ${name}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };

  /** A request written as is on a socket (no client normalises the path); resolves on the status line or close. */
  const rawRequest = (text: string | Buffer): Promise<Raw> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(e.stack.url).port), '127.0.0.1');
      const parts: Buffer[] = [];
      socket.on('data', (d: Buffer) => parts.push(d));
      socket.on('error', reject);
      socket.on('close', () => {
        const all = Buffer.concat(parts);
        const split = all.indexOf('\r\n\r\n');
        const head = all.subarray(0, split < 0 ? all.length : split).toString('latin1');
        const [line = '', ...lines] = head.split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        resolve({ status: Number(line.split(' ')[1] ?? 0), headers, body: split < 0 ? Buffer.alloc(0) : all.subarray(split + 4) });
      });
      socket.write(text);
      setTimeout(() => socket.end(), 3000).unref();
    });

  /** GET of a path sent exactly as given (node's client does not resolve dot segments). */
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: Number(new URL(e.stack.url).port), path, method, headers }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      });
      req.on('error', reject);
      req.end();
    });

  const multipart = (name: string, fileName: string, type: string, data: Buffer) =>
    Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]);

  const upload = async (versionId: string, body: Buffer, headers: Record<string, string>) => {
    const res = await fetch(`${e.stack.url}/versions/${versionId}/reviewable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, ...headers },
      body: new Uint8Array(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
  const uploadFile = (versionId: string, fileName: string, type: string, data: Buffer) =>
    upload(versionId, multipart('file', fileName, type, data), { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });

  const newVersion = async (code: string) =>
    expectStatus(await admin.api.post('/entities/Version', { project_id: projectId, data: { code } }), 200, 'create Version').id as string;

  /** Polls the reviewable until it is done or failed; fails on any 5xx on the way. */
  const settled = (versionId: string, timeoutMs = 90_000) =>
    eventually(
      async () => {
        const r = await admin.api.get(`/versions/${versionId}/reviewable`);
        expect(r.status).toBe(200);
        return r.body.status === 'done' || r.body.status === 'failed' ? r.body : undefined;
      },
      timeoutMs,
      `reviewable of ${versionId} settled`,
    );

  beforeAll(async () => {
    ff = ensureFfmpeg();
    // The test's own object store, so it can be taken down and brought back on the same port.
    const e2eRoot = join(process.cwd(), '.test-data', 'e2e', `media-s3-${Date.now()}`);
    s3 = await startS3StandIn({ dataDir: e2eRoot });
    e = await startE2EStack(
      'media',
      {
        gateway: { MEDIA_MAX_BYTES: String(MAX), MEDIA_IDLE_TIMEOUT_MS: '5000' },
        'media-transcode': { MEDIA_MAX_BYTES: String(MAX), S3_TIMEOUT_MS: '2000', SWEEP_INTERVAL_MS: '500', SWEEP_GRACE_MS: '1000' },
        'media-worker': { TRANSCODE_ACK_WAIT_MS: '5000', TRANSCODE_RETRY_DELAY_MS: '200', TRANSCODE_TIMEOUT_MS: '60000' },
      },
      { s3: { endpoint: s3.endpoint, accessKey: s3.accessKey, secretKey: s3.secretKey, bucket: s3.bucket, region: s3.region } },
    );
    expect(e.stack.services).toEqual(expect.arrayContaining(['media-transcode', 'media-worker', 'gateway']));
    admin = await bootstrapAdmin(e.api);
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Review', code: 'review' } }), 200).id;

    dir = join(e.logDir, 'media');
    mkdirSync(dir, { recursive: true });
    ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=322x182:rate=25:duration=1',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=1',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv444p',
      '-c:a',
      'aac',
      '-shortest',
      join(dir, 'src.mov'),
    );
    ffmpeg('-f', 'lavfi', '-i', 'testsrc2=size=200x150', '-frames:v', '1', join(dir, 'src.png'));
    files.video = readFileSync(join(dir, 'src.mov'));
    files.image = readFileSync(join(dir, 'src.png'));
  });
  afterAll(async () => {
    await e?.teardown();
    await s3?.stop().catch(() => undefined);
  });

  let proxyKey = '';
  let proxySize = 0;

  it('a multipart video upload answers pending at once, ends done, and is served by key as contracted', async () => {
    const versionId = await newVersion('v001');
    const up = await uploadFile(versionId, 'Shot 010 v001.mov', 'video/quicktime', files.video!);
    expect(up.status, up.text).toBe(200);
    expect(up.body.status).toBe('pending');
    expect(up.body.representation).toMatchObject({
      entity_type: 'Representation',
      data: { transcode_status: 'pending', version: { type: 'Version', id: versionId } },
    });

    const done = await settled(versionId);
    expect(done).toMatchObject({ status: 'done', review_kind: 'video', representation_id: up.body.representation.id, attempts: 1, transcode_error: null });
    expect(done.review_media_key).toMatch(/^rv\/[0-9a-f]{32}\/proxy\.mp4$/);
    expect(done.thumbnail_media_key).toMatch(/^rv\/[0-9a-f]{32}\/thumb\.jpg$/);

    const proxy = await get(`/media/${done.review_media_key}`);
    expect(proxy.status).toBe(200);
    expect(proxy.headers).toMatchObject({ 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'x-content-type-options': 'nosniff' });
    expect(proxy.headers.etag).toBeTruthy();
    expect(proxy.headers['content-disposition']).toBeUndefined();
    const info = probe(proxy.body, 'proxy.mp4');
    const v = info.streams.find((s: any) => s.codec_type === 'video');
    const a = info.streams.find((s: any) => s.codec_type === 'audio');
    expect(v).toMatchObject({ codec_name: 'h264', pix_fmt: 'yuv420p' });
    expect(v.width % 2).toBe(0);
    expect(v.height % 2).toBe(0);
    expect(a).toMatchObject({ codec_name: 'aac' });
    proxyKey = done.review_media_key;
    proxySize = proxy.body.length;
    // Conditional reads against the store's real ETag: a current If-Range keeps the range, a stale
    // one gets the whole object; If-None-Match with the current tag is 304.
    const etag = proxy.headers.etag as string;
    expect((await get(`/media/${done.review_media_key}`, { range: 'bytes=0-99', 'if-range': etag })).status).toBe(206);
    const stale = await get(`/media/${done.review_media_key}`, { range: 'bytes=0-99', 'if-range': '"0000"' });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(proxySize);
    expect((await get(`/media/${done.review_media_key}`, { 'if-none-match': etag })).status).toBe(304);

    const thumb = await get(`/media/${done.thumbnail_media_key}`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/jpeg');
    expect(probe(thumb.body, 'thumb.jpg').streams[0].codec_name).toBe('mjpeg');

    // The Version's thumbnail is the Representation that is done.
    const version = expectStatus(await admin.api.get(`/entities/Version/${versionId}`), 200);
    expect(version.thumbnail_id).toBe(up.body.representation.id);
  });

  it('a raw image/* body named by x-file-name ends done with a JPEG proxy', async () => {
    const versionId = await newVersion('v002');
    const up = await upload(versionId, files.image!, { 'content-type': 'image/png', 'x-file-name': 'plate.png' });
    expect(up.status, up.text).toBe(200);
    const done = await settled(versionId);
    expect(done).toMatchObject({ status: 'done', review_kind: 'image' });
    const proxy = await get(`/media/${done.review_media_key}`);
    expect(proxy.status).toBe(200);
    expect(proxy.headers['content-type']).toBe('image/jpeg');
    expect(probe(proxy.body, 'proxy.jpg').streams[0].codec_name).toBe('mjpeg');
  });

  it('a text file named .mov ends failed with a readable reason, never a 5xx', async () => {
    const versionId = await newVersion('v003');
    const up = await uploadFile(versionId, 'notes.mov', 'video/quicktime', Buffer.from('this is not a movie\n'.repeat(50)));
    expect(up.status, up.text).toBe(200);
    const failed = await settled(versionId);
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toBe(2);
    expect(failed.transcode_error).toMatch(/\w/);
    expect(failed.transcode_error.length).toBeLessThan(300);
    expect(failed.review_media_key).toBeNull();
  });

  it('answers 404 for an unknown Version before reading the body, 413 over MEDIA_MAX_BYTES, 415 and 422 for wrong bodies', async () => {
    const auth = `Authorization: Bearer ${admin.token}\r\n`;
    const unknown = '0190a0b0-0000-7000-8000-00000000dead';
    // A declared body that is never sent: the answer does not wait for it.
    const missing = await rawRequest(
      `POST /versions/${unknown}/reviewable HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: video/mp4\r\nContent-Length: 1000\r\n\r\n`,
    );
    expect(missing.status).toBe(404);
    const versionId = await newVersion('v004');
    const declared = await rawRequest(
      `POST /versions/${versionId}/reviewable HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: video/mp4\r\nContent-Length: ${MAX + 1}\r\n\r\n`,
    );
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body.toString()).code).toBe('payload_too_large');
    const streamed = await uploadFile(versionId, 'big.mov', 'video/quicktime', Buffer.alloc(MAX + 1024, 1));
    expect(streamed.status).toBe(413);
    expect(streamed.body.code).toBe('payload_too_large');
    expect((await upload(versionId, Buffer.from('hello'), { 'content-type': 'text/plain' })).status).toBe(415);
    const noFile = await upload(versionId, multipart('other', 'a.mov', 'video/quicktime', Buffer.alloc(10)), {
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    });
    expect(noFile.status).toBe(422);
    expect(noFile.body.detail[0].loc).toEqual(['body', 'file']);
    // Nothing was created for any of them.
    expect((await admin.api.get(`/versions/${versionId}/reviewable`)).status).toBe(404);
  });

  it('a multipart body cut inside the file part is 400 and the gateway keeps serving; control characters leave file names', async () => {
    const versionId = await newVersion('v009');
    const gatewayPid = e.stack.pid('gateway');
    const cut = Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cut.mov"\r\nContent-Type: video/quicktime\r\n\r\n`),
      files.video!.subarray(0, 4096),
    ]);
    for (let i = 0; i < 3; i++) {
      const res = await upload(versionId, cut, { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('bad_request');
    }
    await new Promise((r) => setTimeout(r, 200));
    // The same process answers: a failure after the answer never ends it (the stack would restart a crashed one).
    expect((await fetch(`${e.stack.url}/healthz`)).status).toBe(200);
    expect(e.stack.pid('gateway')).toBe(gatewayPid);

    // A NUL, CR/LF and a bidirectional override in the name (RFC 5987 form): kept without them, never a 5xx.
    const named = multipart('file', 'x', 'video/quicktime', files.video!)
      .toString('latin1')
      .replace('filename="x"', "filename*=UTF-8''a%00b%0d%0a%E2%80%AEc.mov");
    const up = await upload(versionId, Buffer.from(named, 'latin1'), { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
    expect(up.status, up.text).toBe(200);
    expect(up.body.representation.data.name).toBe('abc.mov');
    expect(up.body.representation.data.files.original.file_name).toBe('abc.mov');
  });

  it('answers Range requests on a real proxy: a-b, open-ended, suffix, several, past the end; HEAD', async () => {
    expect(proxyKey).not.toBe('');
    const whole = (await get(`/media/${proxyKey}`)).body;
    const cases: Array<[string, number, number, number]> = [
      ['bytes=0-99', 206, 0, 99],
      ['bytes=100-', 206, 100, proxySize - 1],
      ['bytes=-64', 206, proxySize - 64, proxySize - 1],
      [`bytes=10-${proxySize + 1000}`, 206, 10, proxySize - 1],
      ['bytes=0-1,4-9', 200, 0, proxySize - 1],
    ];
    for (const [range, status, start, end] of cases) {
      const r = await get(`/media/${proxyKey}`, { range });
      expect(r.status, range).toBe(status);
      expect(r.body.equals(whole.subarray(start, end + 1)), range).toBe(true);
      if (status === 206) expect(r.headers['content-range'], range).toBe(`bytes ${start}-${end}/${proxySize}`);
    }
    for (const range of [`bytes=${proxySize}-`, `bytes=${proxySize + 10}-${proxySize + 20}`, 'bytes=-0']) {
      const r = await get(`/media/${proxyKey}`, { range });
      expect(r.status, range).toBe(416);
      expect(r.headers['content-range'], range).toBe(`bytes */${proxySize}`);
    }
    const head = await get(`/media/${proxyKey}`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(proxySize));
    expect(head.body.length).toBe(0);
  });

  it('answers 400 to 30+ hostile key spellings over real HTTP and 404 to unknown keys; nothing is served', async () => {
    expect(proxyKey).not.toBe('');
    const [, hex = '', name = ''] = /^rv\/([0-9a-f]{32})\/(.+)$/.exec(proxyKey)!;
    const hostile = [
      `rv/${hex}/..%2f..%2f..%2fetc%2fpasswd`,
      `rv/${hex}/%2e%2e`,
      `rv/${hex}/%2E%2E%2F${name}`,
      `rv/${hex}/%252e%252e%252f${name}`,
      `rv%2f${hex}%2f..%2f${name}`,
      `rv/${hex}%2f..%2f${hex}/${name}`,
      `rv%5c${hex}%5c${name}`,
      `rv/${hex}/..%5c..%5cwindows%5cwin.ini`,
      `rv/${hex}/${name}%5c`,
      `%2fetc%2fpasswd`,
      `%2f${proxyKey}`,
      `C:%5cWindows%5cwin.ini`,
      `rv/${hex}/${name}%00`,
      `rv/${hex}/${name}%00.jpg`,
      `rv/${hex}/%c0%ae%c0%ae%c0%af`,
      `rv/${hex}/%e0%80%ae%e0%80%ae`,
      `rv/${hex}/%c0%afetc%c0%afpasswd`,
      `rv/${hex}/%ef%bc%8e%ef%bc%8e`,
      `rv/${hex}/%e2%80%a4%e2%80%a4`,
      `rv/${hex}/proxy%e3%80%82mp4`,
      `rv/${hex}/%u002e%u002e`,
      `rv//${hex}/${name}`,
      `rv/${hex}//${name}`,
      `rv/${hex.toUpperCase()}/${name}`,
      `rv/${hex.slice(2)}/${name}`,
      `rv/${hex}/${name.toUpperCase()}`,
      `rv/${hex}/${name}/..`,
      `rv/${hex}/.`,
      `rv/${hex}/...`,
      `rv/${hex}/%`,
      `rv/${hex}/%zz`,
      `rv/${hex}/${name}%0d%0aSet-Cookie:%20x=1`,
      `rv/${hex}/${'a'.repeat(80)}`,
      `file:%2f%2f%2fetc%2fpasswd`,
    ];
    expect(hostile.length).toBeGreaterThanOrEqual(30);
    for (const path of hostile) {
      const r = await get(`/media/${path}`);
      expect([400, 404], path).toContain(r.status);
      expect(r.headers['content-type'], path).toMatch(/^application\/json/);
      expect(JSON.parse(r.body.toString()).code, path).toMatch(/^(bad_request|not_found)$/);
    }
    // Dot segments sent raw (clients that do not normalise them) are refused too.
    for (const path of [`/media/rv/${hex}/../../../etc/passwd`, `/media/rv/${hex}/./${name}`, `/media/../media/${proxyKey}`]) {
      const r = await rawRequest(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect([400, 404], path).toContain(r.status);
    }
    expect((await get(`/media/rv/${'0'.repeat(32)}/proxy.mp4`)).status).toBe(404);
    // The real key still answers, also with its slashes encoded (the path is decoded once).
    expect((await get(`/media/${proxyKey}`)).status).toBe(200);
    expect((await get(`/media/${proxyKey.replaceAll('/', '%2F')}`)).status).toBe(200);
  });

  it('with the object store down an upload is 503 within seconds and leaves no reviewable pending', async () => {
    const versionId = await newVersion('v005');
    const port = s3.port;
    await s3.stop();
    try {
      const started = Date.now();
      const up = await uploadFile(versionId, 'down.mov', 'video/quicktime', files.video!);
      expect(up.status, up.text).toBe(503);
      expect(up.body.code).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(8000);
      // Reads of stored media are 503 too, not 500.
      expect((await get(`/media/${proxyKey}`)).status).toBe(503);
    } finally {
      s3 = await startS3StandIn({ dataDir: join(s3.directory, '..'), port });
    }
    // Nothing pending: either nothing was created, or it ended failed.
    const after = await admin.api.get(`/versions/${versionId}/reviewable`);
    if (after.status === 200) expect((await settled(versionId)).status).toBe('failed');
    else expect(after.status).toBe(404);
    // The store is back: the next upload goes through.
    const again = await uploadFile(versionId, 'back.mov', 'video/quicktime', files.video!);
    expect(again.status, again.text).toBe(200);
    expect((await settled(versionId)).status).toBe('done');
  });
});
