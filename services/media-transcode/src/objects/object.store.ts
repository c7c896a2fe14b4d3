/**
 * The media objects in S3 through the `minio` client (the same code against MinIO, AWS S3 or the
 * local stand-in). Uploads of unknown size are multipart with `S3_PART_BYTES` parts, so memory
 * stays bounded whatever the size. A store that does not answer within `S3_TIMEOUT_MS` (or
 * refuses the connection) is `unavailable`; a missing object is `not_found`.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import { AppError } from '@reelbase/lib-platform';
import type { MediaObjects, ObjectInfo } from '../domain/ports.js';

export interface ObjectStoreSettings {
  S3_ENDPOINT: string;
  S3_ACCESS_KEY: string;
  S3_SECRET_KEY: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_PART_BYTES: number;
  S3_TIMEOUT_MS: number;
}

const NOT_FOUND_CODES = new Set(['NoSuchKey', 'NotFound', 'NoSuchObject']);

/** Largest output file stored in one request (read whole into memory first). */
export const SINGLE_PUT_MAX_BYTES = 16 * 1024 * 1024;

function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; statusCode?: number } | undefined;
  return NOT_FOUND_CODES.has(e?.code ?? '') || e?.statusCode === 404;
}

/** Turns a client error into an AppError: not_found for a missing object, unavailable otherwise. */
export function storeError(err: unknown, what: string): AppError {
  if (err instanceof AppError) return err;
  if (isNotFound(err)) return AppError.notFound(`${what}: no such media object`);
  return AppError.unavailable(`the object store is unavailable (${what}: ${(err as Error)?.message ?? String(err)})`, err);
}

export class ObjectStore implements MediaObjects {
  readonly client: Client;
  readonly bucket: string;
  private readonly timeoutMs: number;
  private readonly partBytes: number;

  constructor(s: ObjectStoreSettings) {
    const url = new URL(s.S3_ENDPOINT);
    const useSSL = url.protocol === 'https:';
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: s.S3_ACCESS_KEY,
      secretKey: s.S3_SECRET_KEY,
      region: s.S3_REGION,
      pathStyle: true,
      partSize: s.S3_PART_BYTES,
    });
    this.bucket = s.S3_BUCKET;
    this.timeoutMs = s.S3_TIMEOUT_MS;
    this.partBytes = s.S3_PART_BYTES;
  }

  /** Rejects with `unavailable` when `p` takes longer than the store timeout. */
  private bounded<T>(p: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(AppError.unavailable(`the object store did not answer within ${this.timeoutMs} ms (${what})`)), this.timeoutMs);
    });
    return Promise.race([p, limit])
      .catch((err: unknown) => {
        throw storeError(err, what);
      })
      .finally(() => clearTimeout(timer));
  }

  /** Creates the bucket when it does not exist yet. */
  async ensureBucket(): Promise<void> {
    const exists = await this.bounded(this.client.bucketExists(this.bucket), 'bucket check');
    if (!exists) {
      await this.bounded(this.client.makeBucket(this.bucket, ''), 'bucket creation').catch(async (err: unknown) => {
        // Another replica created it first.
        if (!(await this.client.bucketExists(this.bucket).catch(() => false))) throw err;
      });
    }
  }

  /** Readiness: the bucket answers. */
  async ping(): Promise<void> {
    await this.bounded(this.client.bucketExists(this.bucket), 'ping');
  }

  /**
   * Stores a stream of unknown length (multipart, `S3_PART_BYTES` at a time). Not bounded by a
   * total time (large uploads take minutes); the caller bounds pauses.
   *
   * `sizeHint` is the length the client declared, if any. When it is over one part but at most
   * {@link SINGLE_PUT_MAX_BYTES}, the first buffer is made that large, so a file of that size is
   * one request instead of a multipart upload; a hint that was wrong costs nothing but that
   * buffer (more bytes simply go on as further parts, fewer still make one request).
   */
  async putStream(key: string, body: Readable, contentType: string, sizeHint = 0): Promise<void> {
    const headers = { 'Content-Type': contentType };
    // Two part buffers, filled in turn and reused for the whole upload: one is sent while the
    // other fills, and no part is ever copied again (the client's own stream upload gathers each
    // part into a new buffer and can hold three parts at once). A part sent waits for the store
    // before its buffer is filled again, so the store's pace reaches the caller as back-pressure.
    // The second buffer only once the first is full (most renders are smaller than a part).
    const first = sizeHint > this.partBytes && sizeHint <= SINGLE_PUT_MAX_BYTES ? sizeHint : this.partBytes;
    const parts: Buffer[] = [Buffer.allocUnsafe(first)];
    let current = 0;
    let filled = 0;
    let uploadId: string | undefined;
    let partNumber = 0;
    const etags: { part: number; etag: string }[] = [];
    let sending: Promise<void> | undefined;
    const send = async (part: Buffer, n: number) => {
      uploadId ??= await this.client.initiateNewMultipartUpload(this.bucket, key, headers);
      const res = await this.client.makeRequestAsyncOmit(
        {
          method: 'PUT',
          bucketName: this.bucket,
          objectName: key,
          query: `partNumber=${n}&uploadId=${encodeURIComponent(uploadId)}`,
          headers: { 'Content-Length': part.length, 'Content-MD5': createHash('md5').update(part).digest('base64') },
        },
        part,
      );
      etags.push({ part: n, etag: String(res.headers.etag ?? '').replace(/^"|"$/g, '') });
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        let at = 0;
        while (at < chunk.length) {
          if (filled === parts[current]!.length) {
            // A full part with more bytes behind it (a file that just fills it stays one request).
            // The part before must be stored before its buffer is filled again.
            await sending;
            const observed = send(parts[current]!, ++partNumber);
            // A part the store refuses ends the reading at once, not when the next part is full.
            observed.catch((err: unknown) => body.destroy(err as Error));
            sending = observed;
            current = 1 - current;
            parts[current] ??= Buffer.allocUnsafe(this.partBytes);
            filled = 0;
          }
          const n = chunk.copy(parts[current]!, filled, at);
          filled += n;
          at += n;
        }
      }
      await sending;
      if (uploadId === undefined) {
        // No more than the first buffer: a single request.
        await this.putOne(key, parts[current]!.subarray(0, filled), contentType);
        return;
      }
      if (filled > 0) await send(parts[current]!.subarray(0, filled), ++partNumber);
      await this.client.completeMultipartUpload(this.bucket, key, uploadId, etags);
    } catch (err) {
      await sending?.catch(() => {});
      if (uploadId !== undefined) {
        const id = uploadId;
        await this.bounded(this.client.abortMultipartUpload(this.bucket, key, id), 'abort upload').catch(() => {});
      }
      throw storeError(err, 'upload');
    }
  }

  /**
   * One PUT of a whole object. The client's putObject goes multipart for anything over its part
   * size, even a Buffer in memory.
   */
  private async putOne(key: string, body: Buffer, contentType: string): Promise<void> {
    await this.client.makeRequestAsyncOmit(
      {
        method: 'PUT',
        bucketName: this.bucket,
        objectName: key,
        headers: { 'Content-Length': body.length, 'Content-Type': contentType, 'Content-MD5': createHash('md5').update(body).digest('base64') },
      },
      body,
    );
  }

  /** Stores a small object in one request. */
  async putBuffer(key: string, body: Buffer, contentType: string): Promise<void> {
    await this.bounded(this.putOne(key, body, contentType), 'store');
  }

  /**
   * Stores a local file. One of at most {@link SINGLE_PUT_MAX_BYTES} (a thumbnail, a proxy of a
   * shot) is read whole and sent in one request; a larger one is streamed as a multipart upload of
   * `S3_PART_BYTES` parts (for a 6 MiB proxy the client's putObject made four requests instead
   * of one: docs/media.md, "Worker").
   */
  async putFile(key: string, file: string, contentType: string): Promise<number> {
    const { size } = await stat(file);
    try {
      if (size <= SINGLE_PUT_MAX_BYTES) {
        await this.putOne(key, await readFile(file), contentType);
        return size;
      }
      await this.client.putObject(this.bucket, key, createReadStream(file), size, { 'Content-Type': contentType });
    } catch (err) {
      throw storeError(err, 'store output');
    }
    return size;
  }

  /** Copies an object into a local file; `signal` stops the copy. */
  async download(key: string, file: string, signal?: AbortSignal): Promise<void> {
    const body = await this.bounded(this.client.getObject(this.bucket, key), 'read original');
    try {
      await pipeline(body, createWriteStream(file), { signal });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw storeError(err, 'read original');
    }
  }

  async stat(key: string): Promise<ObjectInfo> {
    const s = await this.bounded(this.client.statObject(this.bucket, key), 'stat');
    const meta = s.metaData as Record<string, string>;
    const contentType = meta['content-type'] ?? meta['Content-Type'] ?? 'application/octet-stream';
    return { size: s.size, etag: `"${s.etag.replace(/"/g, '')}"`, contentType };
  }

  /** A stream of bytes [start, start + length) of an object. */
  async readRange(key: string, start: number, length: number): Promise<Readable> {
    return this.bounded(this.client.getPartialObject(this.bucket, key, start, length), 'read');
  }

  /** Removes objects; a missing one is fine. */
  async remove(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.bounded(this.client.removeObjects(this.bucket, keys), 'remove');
  }
}
