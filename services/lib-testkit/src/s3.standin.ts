/**
 * The local S3-compatible store: s3rver run in-process with one bucket configured at
 * start, path-style addressing, region us-east-1 and the fixed keys S3RVER/S3RVER.
 *
 * s3rver answers `GET /<bucket>?uploads` (ListMultipartUploads) with 501, and the minio
 * client asks exactly that before every multipart upload (to resume an unfinished one), so
 * unknown-size streams and large objects would fail. A middleware placed first in the Koa
 * stack answers it with an empty listing instead: there is never an upload to resume here.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import S3rver, { type S3rverContext } from 's3rver';

/** Keys s3rver accepts (its defaults; it checks signatures made with them). */
export const S3_STANDIN_ACCESS_KEY = 'S3RVER';
export const S3_STANDIN_SECRET_KEY = 'S3RVER';
export const S3_STANDIN_REGION = 'us-east-1';
export const DEFAULT_S3_BUCKET = 'reelbase-media';

export interface S3StandInOptions {
  /** Where objects live; the store uses `<dataDir>/s3`. */
  dataDir: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Interface to bind; 127.0.0.1 by default (local use only). */
  host?: string;
  bucket?: string;
  /** Log every request (s3rver's own console logger); off by default. */
  verbose?: boolean;
}

/** A running stand-in and what a client needs to reach it. */
export interface S3StandIn {
  /** e.g. http://127.0.0.1:41234 */
  endpoint: string;
  host: string;
  port: number;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
  directory: string;
  stop(): Promise<void>;
}

function emptyMultipartListing(bucket: string, prefix: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${esc(bucket)}</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>` +
    `<NextKeyMarker></NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker><Prefix>${esc(prefix)}</Prefix>` +
    '<MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>'
  );
}

/** Answers ListMultipartUploads (which s3rver lacks) with an empty result; passes everything else on. */
export async function listUploadsMiddleware(ctx: S3rverContext, next: () => Promise<void>): Promise<void> {
  const segments = ctx.path.split('/').filter(Boolean);
  if (ctx.method === 'GET' && segments.length === 1 && 'uploads' in ctx.query) {
    const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : '';
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body = emptyMultipartListing(decodeURIComponent(segments[0]!), prefix);
    return;
  }
  await next();
}

/** Starts the stand-in; resolves once it listens with the bucket in place. */
export async function startS3StandIn(options: S3StandInOptions): Promise<S3StandIn> {
  const directory = resolve(join(options.dataDir, 's3'));
  mkdirSync(directory, { recursive: true });
  const host = options.host ?? '127.0.0.1';
  const bucket = options.bucket ?? DEFAULT_S3_BUCKET;
  const server = new S3rver({
    address: host,
    port: options.port ?? 0,
    silent: !options.verbose,
    directory,
    vhostBuckets: false,
    configureBuckets: [{ name: bucket }],
  });
  // Koa composes its middleware array on each callback(), so this runs before s3rver's router.
  server.middleware.unshift(listUploadsMiddleware);
  const address = await server.run();
  return {
    endpoint: `http://${host}:${address.port}`,
    host,
    port: address.port,
    accessKey: S3_STANDIN_ACCESS_KEY,
    secretKey: S3_STANDIN_SECRET_KEY,
    region: S3_STANDIN_REGION,
    bucket,
    directory,
    async stop() {
      server.httpServer?.closeAllConnections?.();
      await server.close();
    },
  };
}
