/**
 * The media routes at the gateway against an in-memory media-transcode: uploads (multipart and
 * raw, 404 before the body, 413 declared and streamed, 415, 422 without a `file` part), the
 * reviewable status, and `GET /media/{key}` (keys refused before the store, ranges, headers).
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { parseRange, resolveRange } from '../http/range.js';

let gw: TestGateway;
const VERSION = '0190a0b0-0000-7000-8000-0000000000c1';
const MAX = 64 * 1024;

beforeAll(async () => {
  gw = await startTestGateway({ MEDIA_MAX_BYTES: String(MAX), MEDIA_IDLE_TIMEOUT_MS: '800', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
  gw.state.records.set(VERSION, {
    id: VERSION,
    entityType: 'Version',
    active: true,
    createdAt: '2026-01-01T00:00:00.000000Z',
    updatedAt: '2026-01-01T00:00:00.000000Z',
    dataJson: '{"code":"v001"}',
  });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
});

function multipart(name: string, fileName: string, type: string, data: Buffer, boundary = 'XyZbOuNdArY'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

async function upload(body: Buffer | undefined, headers: Record<string, string>, version = VERSION) {
  const res = await fetch(`${gw.url}/versions/${version}/reviewable`, {
    method: 'POST',
    headers: { authorization: 'Bearer artist-token', ...headers },
    body: body ? new Uint8Array(body) : undefined,
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

/** GET (or another method) of a raw path, sent as is (fetch would normalise dots). */
function rawGet(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: gw.httpPort, path, method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The status line of a request written on a raw socket (header and body as given). */
function rawStatus(text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(gw.httpPort, '127.0.0.1');
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      got += d;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) {
        socket.destroy();
        resolve(Number(m[1]));
      }
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

describe('POST /versions/{id}/reviewable', () => {
  it('streams the multipart part "file" and answers the pending Representation', async () => {
    const data = Buffer.alloc(40_000, 7);
    const res = await upload(multipart('file', 'Shot 010.MOV', 'video/quicktime', data), { 'content-type': 'multipart/form-data; boundary=XyZbOuNdArY' });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('pending');
    expect(res.json.representation).toMatchObject({ entity_type: 'Representation', data: { transcode_status: 'pending' } });
    const last = gw.state.uploads!.at(-1)!;
    expect(last).toEqual({ header: { versionId: VERSION, fileName: 'Shot 010.MOV', contentType: 'video/quicktime', declaredSize: 0 }, bytes: data.length });
  });

  it('takes a raw video/* or image/* body named by x-file-name', async () => {
    const data = Buffer.alloc(1000, 1);
    const res = await upload(data, { 'content-type': 'image/png', 'x-file-name': encodeURIComponent('plate 01.png') });
    expect(res.status).toBe(200);
    expect(gw.state.uploads!.at(-1)).toEqual({
      header: { versionId: VERSION, fileName: 'plate 01.png', contentType: 'image/png', declaredSize: 1000 },
      bytes: 1000,
    });
  });

  it('answers 404 for an unknown Version before the body is read', async () => {
    const before = gw.state.uploads!.length;
    const res = await upload(Buffer.alloc(10), { 'content-type': 'video/mp4' }, '0190a0b0-0000-7000-8000-0000000000ff');
    expect(res.status).toBe(404);
    expect(gw.state.uploads!.length).toBe(before);
    // A declared body that never comes is not waited for.
    const status = await rawStatus(
      `POST /versions/0190a0b0-0000-7000-8000-0000000000ff/reviewable HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer artist-token\r\nContent-Type: video/mp4\r\nContent-Length: 50000\r\n\r\n`,
    );
    expect(status).toBe(404);
  });

  it('answers 413 for a declared size over MEDIA_MAX_BYTES before reading, and for a body passing it', async () => {
    const status = await rawStatus(
      `POST /versions/${VERSION}/reviewable HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer artist-token\r\nContent-Type: video/mp4\r\nContent-Length: ${MAX + 1}\r\n\r\n`,
    );
    expect(status).toBe(413);
    const before = gw.state.uploads!.length;
    const res = await upload(multipart('file', 'big.mov', 'video/quicktime', Buffer.alloc(MAX + 10)), {
      'content-type': 'multipart/form-data; boundary=XyZbOuNdArY',
    });
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ detail: expect.stringContaining(`${MAX} bytes`), code: 'payload_too_large' });
    expect(gw.state.uploads!.length).toBe(before);
  });

  it('refuses other body types (415), a form without "file" (422) and anonymous callers (401)', async () => {
    expect((await upload(Buffer.from('hello'), { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await upload(Buffer.from('{}'), { 'content-type': 'application/json' })).status).toBe(415);
    const noFile = await upload(multipart('other', 'a.mov', 'video/quicktime', Buffer.alloc(10)), {
      'content-type': 'multipart/form-data; boundary=XyZbOuNdArY',
    });
    expect(noFile.status).toBe(422);
    expect(noFile.json.detail[0]).toMatchObject({ loc: ['body', 'file'], type: 'missing' });
    const anon = await fetch(`${gw.url}/versions/${VERSION}/reviewable`, { method: 'POST', headers: { 'content-type': 'video/mp4' }, body: 'x' });
    expect(anon.status).toBe(401);
  });

  it('answers 400 for a multipart body that ends inside the file part, and keeps serving', async () => {
    const head = Buffer.from('--XyZbOuNdArY\r\nContent-Disposition: form-data; name="file"; filename="a.mov"\r\nContent-Type: video/quicktime\r\n\r\n');
    for (const tail of [Buffer.alloc(10, 1), Buffer.alloc(MAX / 2, 2)]) {
      const res = await upload(Buffer.concat([head, tail]), { 'content-type': 'multipart/form-data; boundary=XyZbOuNdArY' });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'bad_request' });
    }
    // The gateway is still there: a failure after the answer never ends the process.
    await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('answers 408 when an upload body pauses past MEDIA_IDLE_TIMEOUT_MS', async () => {
    const started = Date.now();
    const status = await rawStatus(
      `POST /versions/${VERSION}/reviewable HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer artist-token\r\nContent-Type: video/mp4\r\nContent-Length: 100\r\n\r\nabc`,
    );
    expect(status).toBe(408);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers 503 quickly when media-transcode is down', async () => {
    gw.state.down.add('media');
    try {
      const res = await upload(Buffer.alloc(10), { 'content-type': 'video/mp4' });
      expect(res.status).toBe(503);
    } finally {
      gw.state.down.delete('media');
    }
  });
});

describe('an upload held back by a slow store', () => {
  let slow: TestGateway;
  beforeAll(async () => {
    slow = await startTestGateway({ MEDIA_MAX_BYTES: String(64 * 1024 * 1024), MEDIA_IDLE_TIMEOUT_MS: '500' });
    slow.state.records.set(VERSION, gw.state.records.get(VERSION)!);
  });
  afterAll(async () => {
    await slow.stop();
  });

  it('is not timed out while the gateway itself pauses the body (back-pressure is not an idle client)', async () => {
    slow.state.uploadStallMs = 2000;
    const data = Buffer.alloc(16 * 1024 * 1024, 3);
    const res = await fetch(`${slow.url}/versions/${VERSION}/reviewable`, {
      method: 'POST',
      headers: { authorization: 'Bearer artist-token', 'content-type': 'video/mp4' },
      body: new Uint8Array(data),
    });
    expect(res.status).toBe(200);
    expect(slow.state.uploads!.at(-1)!.bytes).toBe(data.length);
  });
});

describe('GET /versions/{id}/reviewable', () => {
  it('answers the status keys, 404 before any upload', async () => {
    const res = await fetch(`${gw.url}/versions/${VERSION}/reviewable`, { headers: { authorization: 'Bearer viewer-token' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'pending',
      review_kind: null,
      review_media_key: null,
      thumbnail_media_key: null,
      representation_id: expect.any(String),
      attempts: 0,
      transcode_error: null,
    });
    const none = await fetch(`${gw.url}/versions/0190a0b0-0000-7000-8000-0000000000fe/reviewable`, { headers: { authorization: 'Bearer viewer-token' } });
    expect(none.status).toBe(404);
  });
});

describe('GET /media/{key}', () => {
  const HEX = 'ab'.repeat(16);
  const VIDEO = `rv/${HEX}/proxy.mp4`;
  const TEXT = `rv/${HEX}/original.mov`;
  const DATA = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
  beforeAll(() => {
    gw.state.media!.set(VIDEO, { contentType: 'video/mp4', data: DATA });
    gw.state.media!.set(TEXT, { contentType: 'text/html', data: Buffer.from('<script>alert(1)</script>') });
    gw.state.media!.set(`rv/${HEX}/empty.jpg`, { contentType: 'image/jpeg', data: Buffer.alloc(0) });
  });

  it('streams the object with its type, ETag, Accept-Ranges and nosniff; no token needed', async () => {
    const res = await rawGet(`/media/${VIDEO}`);
    expect(res.status).toBe(200);
    expect(res.body.equals(DATA)).toBe(true);
    expect(res.headers).toMatchObject({ 'content-type': 'video/mp4', 'accept-ranges': 'bytes', 'x-content-type-options': 'nosniff', 'content-length': '1000' });
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers['content-disposition']).toBeUndefined();
  });

  it('serves anything but images and videos as an attachment', async () => {
    const res = await rawGet(`/media/${TEXT}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="original.mov"');
    expect(res.headers['content-security-policy']).toContain('sandbox');
  });

  it('answers ranges: a-b, open-ended, suffix, clamped end; several ranges or junk get the whole object', async () => {
    const cases: Array<[string, number, number, number]> = [
      ['bytes=0-99', 206, 0, 99],
      ['bytes=990-', 206, 990, 999],
      ['bytes=-10', 206, 990, 999],
      ['bytes=-5000', 206, 0, 999],
      ['bytes=500-99999', 206, 500, 999],
      ['bytes=999-999', 206, 999, 999],
      ['bytes=0-1,5-9', 200, 0, 999],
      ['items=0-5', 200, 0, 999],
      ['bytes=5-1', 200, 0, 999],
    ];
    for (const [range, status, start, end] of cases) {
      const res = await rawGet(`/media/${VIDEO}`, { range });
      expect(res.status, range).toBe(status);
      expect(res.body.equals(DATA.subarray(start, end + 1)), range).toBe(true);
      expect(res.headers['content-length'], range).toBe(String(end - start + 1));
      if (status === 206) expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/1000`);
      else expect(res.headers['content-range'], range).toBeUndefined();
    }
  });

  it('answers 416 with Content-Range */size for a range past the end, a zero suffix, any range of an empty object', async () => {
    for (const [key, range, size] of [
      [VIDEO, 'bytes=1000-', 1000],
      [VIDEO, 'bytes=5000-6000', 1000],
      [VIDEO, 'bytes=-0', 1000],
      [`rv/${HEX}/empty.jpg`, 'bytes=0-', 0],
      [`rv/${HEX}/empty.jpg`, 'bytes=-5', 0],
    ] as const) {
      const res = await rawGet(`/media/${key}`, { range });
      expect(res.status, range).toBe(416);
      expect(res.headers['content-range'], range).toBe(`bytes */${size}`);
      expect(JSON.parse(res.body.toString()).code).toBe('range_not_satisfiable');
    }
  });

  it('keeps a range only under If-Range with the current strong ETag; anything else gets the whole object', async () => {
    const etag = (await rawGet(`/media/${VIDEO}`)).headers.etag as string;
    const ranged = await rawGet(`/media/${VIDEO}`, { range: 'bytes=0-9', 'if-range': etag });
    expect(ranged.status).toBe(206);
    expect(ranged.body.equals(DATA.subarray(0, 10))).toBe(true);
    for (const stale of ['"0123456789abcdef0123456789abcdef"', `W/${etag}`, 'Tue, 01 Jan 2030 00:00:00 GMT', 'junk']) {
      const res = await rawGet(`/media/${VIDEO}`, { range: 'bytes=0-9', 'if-range': stale });
      expect(res.status, stale).toBe(200);
      expect(res.body.equals(DATA), stale).toBe(true);
      expect(res.headers['content-range'], stale).toBeUndefined();
    }
    // A range past the end under a stale tag: the whole object, not 416.
    const past = await rawGet(`/media/${VIDEO}`, { range: 'bytes=5000-', 'if-range': '"stale"' });
    expect(past.status).toBe(200);
    expect(past.body.length).toBe(1000);
  });

  it('answers 304 without a body when If-None-Match holds the current ETag (or *)', async () => {
    const etag = (await rawGet(`/media/${VIDEO}`)).headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await rawGet(`/media/${VIDEO}`, { 'if-none-match': header });
      expect(res.status, header).toBe(304);
      expect(res.body.length, header).toBe(0);
      expect(res.headers.etag, header).toBe(etag);
    }
    const changed = await rawGet(`/media/${VIDEO}`, { 'if-none-match': '"other"' });
    expect(changed.status).toBe(200);
    expect(changed.body.equals(DATA)).toBe(true);
    const unknown = await rawGet(`/media/rv/${'cd'.repeat(16)}/nothing.mp4`, { 'if-none-match': '*' });
    expect(unknown.status).toBe(404);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await rawGet(`/media/${VIDEO}`, {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('1000');
    expect(res.body.length).toBe(0);
  });

  it('answers 404 for an unknown well-formed key and 400 for malformed or escaping ones, never asking the store', async () => {
    expect((await rawGet(`/media/rv/${'cd'.repeat(16)}/proxy.mp4`)).status).toBe(404);
    gw.state.calls.length = 0;
    for (const path of [
      `rv/${HEX}/..%2f..%2fetc%2fpasswd`,
      `rv/${HEX}/%2e%2e`,
      `rv/${HEX}/%252e%252e`,
      `rv%5c${HEX}%5cproxy.mp4`,
      `%2fetc%2fpasswd`,
      `rv/${HEX}/proxy.mp4%00`,
      `rv/${HEX}/%c0%ae%c0%ae`,
      `rv//${HEX}/proxy.mp4`,
    ]) {
      const res = await rawGet(`/media/${path}`);
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.body.toString()), path).toMatchObject({ code: 'bad_request' });
    }
    expect(gw.state.calls.filter((c) => c.method === 'readMedia')).toEqual([]);
  });
});

describe('OpenAPI', () => {
  it('documents the upload bodies, the key parameter and the 206/416 answers', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    const upload = doc.paths['/versions/{id}/reviewable'].post;
    expect(Object.keys(upload.requestBody.content).sort()).toEqual(['image/*', 'multipart/form-data', 'video/*']);
    expect(upload.requestBody.content['multipart/form-data'].schema.required).toEqual(['file']);
    const media = doc.paths['/media/{key}'].get;
    expect(media.parameters.find((p: any) => p.in === 'path')).toMatchObject({ name: 'key', required: true });
    expect(Object.keys(media.responses)).toEqual(expect.arrayContaining(['200', '206', '400', '404', '416']));
  });
});

describe('Range parsing', () => {
  it('parses single ranges and ignores the rest', () => {
    expect(parseRange(undefined)).toEqual({ kind: 'whole' });
    expect(parseRange('bytes=1-2')).toEqual({ kind: 'from', start: 1, end: 2 });
    expect(parseRange('bytes=7-')).toEqual({ kind: 'from', start: 7 });
    expect(parseRange('bytes=-7')).toEqual({ kind: 'suffix', length: 7 });
    expect(parseRange('bytes=-')).toEqual({ kind: 'whole' });
    expect(parseRange('bytes=1-2,3-4')).toEqual({ kind: 'whole' });
    expect(parseRange(`bytes=${'9'.repeat(20)}-`)).toEqual({ kind: 'whole' });
    expect(resolveRange({ kind: 'suffix', length: 10 }, 5)).toEqual({ start: 0, end: 4 });
    expect(resolveRange({ kind: 'from', start: 5 }, 5)).toBeNull();
  });
});
