/** Just enough of s3rver 3.7.1 (a Koa app, shipped without types) for the local S3 stand-in. */
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  import type { Server } from 'node:http';

  export interface S3rverBucket {
    name: string;
    configs?: Array<string | Buffer>;
  }

  export interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    serviceEndpoint?: string;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: S3rverBucket[];
  }

  /** Koa's context, reduced to what a middleware here reads and writes. */
  export interface S3rverContext {
    method: string;
    path: string;
    query: Record<string, string | string[] | undefined>;
    status: number;
    type: string;
    body: unknown;
    set(field: string, value: string): void;
  }

  export type S3rverMiddleware = (ctx: S3rverContext, next: () => Promise<void>) => Promise<void> | void;

  export default class S3rver {
    constructor(options?: S3rverOptions);
    /** Koa's middleware stack; composed on every `callback()`, so entries added before `run()` take effect. */
    middleware: S3rverMiddleware[];
    httpServer?: Server;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    reset(): void;
  }
}
