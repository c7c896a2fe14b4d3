/**
 * Reviewables and media (docs/media.md, docs/api-notes.md "Media and reviewables"):
 * - `POST /versions/{id}/reviewable` streams one file (multipart part `file`, or a raw
 *   `video/*` / `image/*` body) to media-transcode, which stores it and answers the
 *   Representation (`pending`) at once; the transcode runs on the workers.
 * - `GET /versions/{id}/reviewable`: the latest reviewable's status.
 * - `GET /media/{key}` (and HEAD): one stored object, streamed, with ranges.
 * Bytes pass through with back-pressure and are never held whole: a body is read only as fast
 * as media-transcode takes it.
 */
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, isAppError, isGuestMediaKey, mediaKeyFromPath, type CallContext } from '@reelbase/lib-platform';
import busboy from 'busboy';
import type { Response } from 'express';
import { guestContext } from '../domain/guest.secrets.js';
import type { MediaPeer, MediaRead } from '../clients/media.client.js';
import { ifRangeHolds, noneMatchHits, parseRange, resolveRange, type RangeRequest } from '../http/range.js';
import { Reply, defineRoute, type AnyRoute } from '../http/route.js';
import { mediaHeaders, reviewableJson, uploadJson } from '../mappers/media.mapper.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { KeyPath, ReviewableOut, UploadOut, VersionPath } from '../schemas/media.schema.js';
import type { RouteDeps } from './route.deps.js';

/** `req.is` patterns of a raw upload body. */
const RAW_TYPES = ['video/*', 'image/*'];
const MULTIPART = 'multipart/form-data';

/** The reviewable upload's path, for the body deadline (body.deadline.ts) and nothing else. */
export const UPLOAD_PATH = /^\/versions\/[^/?#]+\/reviewable\/?(?:[?#]|$)/;

/** True for a request whose body is a reviewable upload (streamed through, idle-bounded). */
export function isUploadRequest(req: IncomingMessage): boolean {
  return req.method === 'POST' && UPLOAD_PATH.test(req.url ?? '');
}

/** Counts the bytes passing; more than `max` fails the stream with 413. */
function byteLimit(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > max) return cb(new AppError('too_large', `a reviewable may have at most ${max} bytes`));
      cb(null, chunk);
    },
  });
}

/**
 * The file's bytes as sent to media-transcode: `source` through the byte limit, failed (so the
 * upload stops) when `source` fails or the request breaks off before its end.
 */
function uploadBody(req: IncomingMessage, source: Readable, maxBytes: number): Readable {
  const limited = source.pipe(byteLimit(maxBytes));
  // The reader (the media client) sees the failure through its own reading; this listener only
  // keeps a failure that comes after the reader stopped (an answer already given, say a
  // malformed multipart body) from being an unhandled 'error' event, which would end the process.
  limited.on('error', () => {});
  const broke = (err?: unknown) => limited.destroy(isAppError(err) ? err : new AppError('bad_request', 'the upload body ended before it was complete'));
  if (source !== req) source.once('error', broke);
  req.once('close', () => {
    if (!req.complete) broke();
  });
  return limited;
}

/** A file name from `x-file-name` (percent-decoded when it decodes), else a neutral one. */
function rawFileName(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return 'upload';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Streams the multipart part `file` to media-transcode. Other parts are read and dropped; a
 * form without `file` is 422 naming it; a second `file` part is ignored.
 */
function uploadMultipart(req: IncomingMessage, versionId: string, media: MediaPeer, ctx: CallContext, maxBytes: number): ReturnType<MediaPeer['upload']> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fields: 50, fieldSize: 64 * 1024, parts: 100, headerPairs: 50 } });
    } catch (err) {
      return reject(new AppError('bad_request', `malformed multipart body: ${(err as Error).message}`));
    }
    let started = false;
    let settled = false;
    const settle = (err: unknown, res?: Awaited<ReturnType<MediaPeer['upload']>>) => {
      if (settled) return;
      settled = true;
      if (err) {
        req.unpipe(bb);
        reject(err);
      } else resolve(res!);
    };
    bb.on('file', (name, file: Readable, info) => {
      if (name !== 'file' || started) {
        file.resume();
        return;
      }
      started = true;
      const limited = uploadBody(req, file, maxBytes);
      media
        .upload({ versionId, fileName: info.filename ?? 'upload', contentType: info.mimeType ?? 'application/octet-stream', declaredSize: 0 }, limited, ctx)
        .then(
          (res) => settle(undefined, res),
          (err: unknown) => settle(err),
        );
    });
    bb.once('error', (err: Error) => settle(new AppError('bad_request', `malformed multipart body: ${err.message}`)));
    bb.once('close', () => {
      if (!started) {
        settle(AppError.invalid([{ loc: ['body', 'file'], msg: 'Field required: a multipart part named "file"', type: 'missing' }]));
      }
    });
    req.once('close', () => {
      if (!req.complete) settle(new AppError('bad_request', 'the upload body ended before it was complete'));
    });
    req.pipe(bb);
  });
}

/** The 416 answer: the error body and `Content-Range: bytes *\/size`. */
function notSatisfiable(res: Response, size: number): void {
  res
    .status(416)
    .set('content-range', `bytes */${size}`)
    .set('accept-ranges', 'bytes')
    .json({ detail: `the requested range is not within the object's ${size} bytes`, code: 'range_not_satisfiable' });
}

/** The object's size from a `range_not_satisfiable` refusal, or undefined for any other error. */
function unsatisfiableSize(err: unknown): number | undefined {
  if (!isAppError(err) || err.code !== 'range_not_satisfiable') return undefined;
  const size = Number(err.extra.size);
  return Number.isFinite(size) && size >= 0 ? size : 0;
}

/** Reads `key` for `range`: a suffix first learns the size (one byte's read), then asks for its bytes. */
async function readRange(
  media: MediaPeer,
  key: string,
  range: Exclude<RangeRequest, { kind: 'whole' }>,
  ctx: CallContext,
): Promise<MediaRead | { size: number }> {
  let start: number;
  let end: number;
  if (range.kind === 'suffix') {
    let size: number;
    try {
      const probe = await media.read({ key, hasRange: true, rangeStart: 0, rangeEnd: 0 }, ctx);
      probe.body.destroy();
      size = probe.info.size;
    } catch (err) {
      const s = unsatisfiableSize(err);
      if (s === undefined) throw err;
      return { size: s };
    }
    const r = resolveRange(range, size);
    if (!r) return { size };
    ({ start, end } = r);
  } else {
    start = range.start;
    end = range.end ?? Number.MAX_SAFE_INTEGER;
  }
  try {
    return await media.read({ key, hasRange: true, rangeStart: start, rangeEnd: end }, ctx);
  } catch (err) {
    const s = unsatisfiableSize(err);
    if (s === undefined) throw err;
    return { size: s };
  }
}

/** How long an early answer (404, 413, 503) keeps reading the rest of an upload's body. */
const LINGER_MS = 5_000;
/** How many more bytes of it at most. */
const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * A lingering close after an answer sent before the whole body was read. The answer says
 * `Connection: close`; once it is written the gateway half-closes (FIN) instead of closing, and
 * reads and drops the rest of the body (up to LINGER_BYTES or LINGER_MS) before it closes the
 * socket. Closing at once would leave unread bytes behind, which the kernel answers with a
 * reset, and a client still sending would see a broken pipe instead of the answer.
 */
function lingerAfterEarlyAnswer(req: IncomingMessage, res: Response): void {
  if (req.complete || req.destroyed) return;
  res.set('connection', 'close');
  const socket = req.socket;
  let seen = 0;
  // Too long or too much: close now. The body is all read: close once the answer is flushed.
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const finish = () => {
    clearTimeout(timer);
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  // What node does once an answer with `Connection: close` is written: half-close only.
  socket.destroySoon = () => {
    socket.end();
  };
  req.unpipe();
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > LINGER_BYTES) close();
  });
  req.once('end', finish);
  socket.once('end', finish);
  req.resume();
}

/** One answer for a media key that opens nothing: unknown, forged, expired, or its link dead. */
const noSuchMedia = () => AppError.notFound('no media object with this key');

export function mediaRoutes({ peers, media: limits, share }: RouteDeps): AnyRoute[] {
  const media = (): MediaPeer => {
    if (!peers.media) throw AppError.unavailable('media-transcode is not configured');
    return peers.media;
  };
  /**
   * The `rv/` key behind a guest's key (docs/review.md): its seal must open, it must not have
   * expired, and records must find its share link live (one call per request, so a revoked or
   * expired link stops serving at once). Anything else is 404 like an unknown key.
   */
  const openGuestKey = async (guestKey: string, ctx: CallContext): Promise<string> => {
    const opened = share?.secrets?.openMediaKey(guestKey);
    if (!opened) throw noSuchMedia();
    try {
      await peers.records.checkShareLink({ linkId: opened.linkId }, guestContext(ctx));
    } catch (err) {
      if (isAppError(err) && err.kind === 'not_found') throw noSuchMedia();
      throw err;
    }
    return opened.key;
  };
  return [
    defineRoute({
      method: 'post',
      path: '/versions/{id}/reviewable',
      operationId: 'uploadReviewable',
      summary: 'Upload a reviewable (a render or image) for a Version.',
      description:
        'The body is `multipart/form-data` with one part `file`, or the file itself as a raw body with ' +
        '`Content-Type: video/*` or `image/*` and its name in `x-file-name`. It is streamed to the object store ' +
        '(never held whole) and answered as soon as the original is stored: the Representation with ' +
        '`transcode_status` `pending`, and `status` `pending`. The thumbnail and proxy follow on the transcode ' +
        'workers (`GET /versions/{id}/reviewable`). Any role. An unknown Version is 404 before the body is read; ' +
        'a `Content-Length` over the limit (`MEDIA_MAX_BYTES`, 8 GiB) is 413 before it is read, and a body that ' +
        'passes it while streaming is 413 then. A body that pauses longer than `MEDIA_IDLE_TIMEOUT_MS` is 408. ' +
        'A file that cannot be decoded is not an error here: its reviewable ends `failed` with a reason.',
      tags: ['media'],
      auth: 'bearer',
      params: VersionPath,
      bodyTypes: [MULTIPART, ...RAW_TYPES],
      headerParams: [
        { name: 'x-file-name', description: 'The file name of a raw body (percent-encoded when not ASCII); only its extension is kept.' },
        { name: 'Content-Length', description: 'The body size; over `MEDIA_MAX_BYTES` is 413 before anything is read.' },
      ],
      responses: { 200: { description: 'The original is stored; transcoding is scheduled.', schema: UploadOut } },
      errors: [404, 408, 413, 415, 503],
      handler: async ({ params, ctx, req, res }) => {
        const peer = media();
        const multipart = req.is(MULTIPART);
        const raw = !multipart && req.is(RAW_TYPES);
        if (!multipart && !raw) {
          const err = new AppError('bad_request', 'a reviewable is multipart/form-data (part "file") or a raw video/* or image/* body', {
            code: 'unsupported_media_type',
          });
          res.status(415).json({ detail: err.message, code: err.code });
          return;
        }
        // From here on an early answer may leave part of the body unread: keep reading it for a
        // while before the connection closes, so a client still sending reads the answer.
        const closing = <T>(p: Promise<T>): Promise<T> =>
          p.catch((err: unknown) => {
            lingerAfterEarlyAnswer(req, res);
            throw err;
          });
        const declared = Number(req.headers['content-length'] ?? 0);
        if (declared > limits.maxBytes) {
          await closing(Promise.reject(new AppError('too_large', `a reviewable may have at most ${limits.maxBytes} bytes`)));
        }
        // 404 before a byte of the body is read.
        await closing(peers.records.getRecord({ entityType: 'Version', id: params.id }, ctx));
        const out = await closing(
          multipart
            ? uploadMultipart(req, params.id, peer, ctx, limits.maxBytes)
            : peer.upload(
                {
                  versionId: params.id,
                  fileName: rawFileName(req.headers['x-file-name']),
                  contentType: req.headers['content-type'] ?? 'application/octet-stream',
                  declaredSize: Number.isSafeInteger(declared) ? declared : 0,
                },
                uploadBody(req, req, limits.maxBytes),
                ctx,
              ),
        );
        return Reply.rawJson(uploadJson(out));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/versions/{id}/reviewable',
      operationId: 'getReviewable',
      summary: "The transcode status of a Version's latest reviewable.",
      description:
        '`status` is `pending`, `processing`, `done` or `failed`; `review_media_key` and `thumbnail_media_key` are ' +
        'keys for `GET /media/{key}` (the thumbnail appears while the proxy is still encoding), `transcode_error` ' +
        'a readable reason when `failed`. Any authenticated user. 404 when the Version has no reviewable yet.',
      tags: ['media'],
      auth: 'bearer',
      params: VersionPath,
      responses: { 200: { description: 'The latest reviewable.', schema: ReviewableOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => Reply.json(reviewableJson(await media().getReviewable({ versionId: params.id }, ctx))),
    }),
    defineRoute({
      method: 'get',
      path: '/media/{key}',
      expressPath: '/media/*key',
      operationId: 'getMedia',
      summary: 'One stored media file (original, thumbnail or proxy), streamed.',
      description:
        'Public: keys carry 128 random bits each (no key can be derived from another) and are only learnt from the ' +
        "reviewable routes. A share link's guests get keys of their own from `GET /shared/{token}`, " +
        '`sh/<86 base64url characters>/<name>`: sealed by the gateway, bound to the link, opening only the proxy or thumbnail ' +
        'they were issued for, only until `media_expires_at` and only while the link is live (revoked or expired: 404 ' +
        'at once, like an unknown key); they are answered with `Cache-Control: no-store`. Answers the object ' +
        'with its `Content-Type`, `ETag`, `Accept-Ranges: bytes` and `X-Content-Type-Options: nosniff`; anything ' +
        'that is not an image or a video comes as an attachment. `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` ' +
        'are answered 206 with `Content-Range`; a range starting past the end is 416 with ' +
        '`Content-Range: bytes */<size>`; several ranges, or a header that is not a byte range, get the whole ' +
        'object (200). `If-Range` with the current strong `ETag` keeps the range, with any other value (an older ' +
        'tag, a weak tag or a date) the whole object is sent (200); `If-None-Match` holding the current tag is 304. ' +
        'The key is taken from the path decoded once: anything but `rv/<32 lowercase hex>/<name>` or a guest key ' +
        '(encoded or doubly encoded dots or slashes, backslashes, NUL, absolute paths, look-alike characters) ' +
        'is 400 and never reaches the store; an unknown key is 404. HEAD answers the same headers.',
      tags: ['media'],
      auth: 'public',
      docParams: KeyPath,
      headerParams: [
        { name: 'Range', description: 'One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n`.' },
        {
          name: 'If-Range',
          description: 'The strong `ETag` the client holds: the `Range` applies only while it is current; otherwise (or a date) 200 with the whole object.',
        },
        { name: 'If-None-Match', description: 'ETags the client holds (or `*`): 304 without a body when one is current.' },
      ],
      responses: {
        200: { description: 'The whole object.', contentType: 'application/octet-stream' },
        206: { description: 'The requested range, with `Content-Range`.', contentType: 'application/octet-stream' },
        304: { description: '`If-None-Match` names the current `ETag`: no body.' },
        416: { description: 'The range starts past the end; `Content-Range: bytes */<size>`.', schema: ErrorBody },
      },
      errors: [400, 404, 503],
      handler: async ({ ctx, req, res }) => {
        const path = req.originalUrl.split('?', 1)[0]!;
        const asked = mediaKeyFromPath(path.slice('/media/'.length));
        const guest = isGuestMediaKey(asked);
        const key = guest ? await openGuestKey(asked, ctx) : asked;
        const headers = (info: MediaRead['info']) => {
          res.set(mediaHeaders(key, info));
          // A guest's answer is not kept: once the link is revoked, nothing of it is served again.
          if (guest) res.set({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
        };
        let range = parseRange(req.headers.range);
        const ifNoneMatch = req.get('if-none-match');
        const ifRange = req.get('if-range');
        // A conditional request needs the ETag first: the object is opened whole, and that answer
        // is sent as it is unless the range still applies.
        let whole: MediaRead | null = null;
        if (ifNoneMatch !== undefined || (ifRange !== undefined && range.kind !== 'whole')) {
          whole = await media().read({ key, hasRange: false, rangeStart: 0, rangeEnd: 0 }, ctx);
          if (ifNoneMatch !== undefined && noneMatchHits(ifNoneMatch, whole.info.etag)) {
            whole.body.destroy();
            headers(whole.info);
            res.removeHeader('content-type');
            res.removeHeader('content-disposition');
            res.status(304).end();
            return;
          }
          if (range.kind !== 'whole' && ifRange !== undefined && !ifRangeHolds(ifRange, whole.info.etag)) range = { kind: 'whole' };
          if (range.kind !== 'whole') {
            whole.body.destroy();
            whole = null;
          }
        }
        const read =
          whole ??
          (range.kind === 'whole' ? await media().read({ key, hasRange: false, rangeStart: 0, rangeEnd: 0 }, ctx) : await readRange(media(), key, range, ctx));
        if (!('info' in read)) return notSatisfiable(res, read.size);
        const { info, body } = read;
        headers(info);
        res.set('content-length', String(info.size === 0 ? 0 : info.rangeEnd - info.rangeStart + 1));
        if (range.kind !== 'whole') {
          res.status(206).set('content-range', `bytes ${info.rangeStart}-${info.rangeEnd}/${info.size}`);
        } else res.status(200);
        if (req.method === 'HEAD') {
          body.destroy();
          res.end();
          return;
        }
        res.once('close', () => body.destroy());
        await pipeline(body, res).catch(() => {
          // The client left, or the store broke off mid-object: the status is already sent, so the
          // connection is cut and the client sees a short body.
          res.destroy();
        });
      },
    }),
  ];
}
