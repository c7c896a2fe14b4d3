/**
 * Client- and server-streaming calls through the wrappers, over loopback: messages in order,
 * the call context and internal assertion, errors rebuilt from trailers, the idle limit of a
 * client stream that stalls, and an unsigned stream refused.
 */
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { mediav1 } from '@reelbase/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallContext } from '../context.js';
import { AppError } from '../errors.js';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { createGrpcClient, type GrpcClient } from './client.js';
import { GrpcServer, type ServiceHandlers } from './server.js';

const SECRET = 'streaming-test-internal-auth-secret-0123456789';
const ctx: CallContext = { requestId: 'req-stream-1', principal: { userId: 'u-1', role: 'Artist', authKind: 'token' } };

describe('streaming gRPC calls', () => {
  let server: GrpcServer;
  let client: GrpcClient<mediav1.MediaServiceClient>;
  let port: number;
  const seen: { ctx?: CallContext; chunks: number } = { chunks: 0 };

  beforeAll(async () => {
    server = new GrpcServer({ logger: createLogger('test', 'silent'), metrics: new Metrics('test'), internalAuthSecret: SECRET, streamIdleMs: 300 });
    const handlers: ServiceHandlers<mediav1.MediaServiceServer> = {
      async uploadReviewable(requests, callCtx) {
        seen.ctx = callCtx;
        let header: mediav1.UploadHeader | undefined;
        let bytes = 0;
        seen.chunks = 0;
        for await (const m of requests) {
          if (m.payload?.$case === 'header') header = m.payload.value;
          else if (m.payload?.$case === 'chunk') {
            bytes += m.payload.value.length;
            seen.chunks++;
            if (header && header.declaredSize > 0 && bytes > header.declaredSize) throw new AppError('too_large', 'more bytes than declared');
          }
        }
        if (!header) throw new AppError('bad_request', 'no header');
        return {
          status: 'pending',
          representation: {
            id: header.versionId,
            entityType: 'Representation',
            active: true,
            createdAt: '',
            updatedAt: '',
            dataJson: JSON.stringify({ bytes }),
          },
        };
      },
      async getReviewable() {
        throw AppError.notFound('no reviewable');
      },
      async finishedOutputs() {
        return { outputs: [] };
      },
      async readMedia(request, _ctx, out) {
        if (request.key === 'missing') throw AppError.notFound('no such media');
        if (request.key === 'range') throw new AppError('bad_request', 'range not satisfiable', { code: 'range_not_satisfiable', extra: { size: 10 } });
        await out.write({ payload: { $case: 'info', value: { contentType: 'video/mp4', size: 3000, etag: '"e"', rangeStart: 0, rangeEnd: 2999 } } });
        for (let i = 0; i < 3; i++) await out.write({ payload: { $case: 'data', value: Buffer.alloc(1000, i) } });
      },
    };
    server.add<mediav1.MediaServiceServer>('reelbase.media.v1.MediaService', mediav1.MediaServiceService, handlers);
    port = await server.listen(0, '127.0.0.1');
    client = createGrpcClient(mediav1.MediaServiceClient, mediav1.MediaServiceService, {
      name: 'media',
      address: `127.0.0.1:${port}`,
      internalAuthSecret: SECRET,
    });
  });

  afterAll(async () => {
    client.close();
    await server.close(100);
  });

  it('sends a client stream in order with the caller context and gets the answer', async () => {
    const call = client.clientStream('uploadReviewable', ctx);
    await call.write({ payload: { $case: 'header', value: { versionId: 'v-1', fileName: 'a.mov', contentType: 'video/quicktime', declaredSize: 0 } } });
    for (let i = 0; i < 50; i++) await call.write({ payload: { $case: 'chunk', value: Buffer.alloc(64 * 1024, i) } });
    const res = await call.end();
    expect(res.status).toBe('pending');
    expect(JSON.parse(res.representation!.dataJson)).toEqual({ bytes: 50 * 64 * 1024 });
    expect(seen.chunks).toBe(50);
    expect(seen.ctx).toEqual(ctx);
  });

  it('rebuilds a handler error of a client stream, kind and code included', async () => {
    const call = client.clientStream('uploadReviewable', ctx);
    await call.write({ payload: { $case: 'header', value: { versionId: 'v-1', fileName: 'a.mov', contentType: 'video/mp4', declaredSize: 10 } } });
    const writes = (async () => {
      for (let i = 0; i < 20; i++) await call.write({ payload: { $case: 'chunk', value: Buffer.alloc(1024) } });
      return call.end();
    })();
    const err = await writes.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('too_large');
  });

  it('cuts off a client stream that goes quiet for longer than the idle limit', async () => {
    const call = client.clientStream('uploadReviewable', ctx);
    await call.write({ payload: { $case: 'header', value: { versionId: 'v-1', fileName: 'a.mov', contentType: 'video/mp4', declaredSize: 0 } } });
    const started = Date.now();
    // Never ends: the server gives up after its 300 ms idle limit.
    const err = await new Promise<unknown>((resolve) => {
      const poll = setInterval(() => {
        call.write({ payload: { $case: 'chunk', value: Buffer.alloc(0) } }).catch((e: unknown) => {
          clearInterval(poll);
          resolve(e);
        });
      }, 500);
    });
    expect((err as AppError).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('receives a server stream in order', async () => {
    const got: mediav1.ReadMediaResponse[] = [];
    for await (const m of client.serverStream('readMedia', { key: 'k', rangeStart: 0, rangeEnd: 0, hasRange: false }, ctx)) got.push(m);
    expect(got[0]!.payload?.$case).toBe('info');
    expect(got.slice(1).map((m) => (m.payload?.$case === 'data' ? m.payload.value[0] : -1))).toEqual([0, 1, 2]);
  });

  it('rebuilds server-stream errors with their code and extra fields', async () => {
    const read = async (key: string) => {
      try {
        for await (const _ of client.serverStream('readMedia', { key, rangeStart: 0, rangeEnd: 0, hasRange: false }, ctx)) void _;
      } catch (e) {
        return e as AppError;
      }
      throw new Error('no error');
    };
    expect((await read('missing')).kind).toBe('not_found');
    const range = await read('range');
    expect(range.code).toBe('range_not_satisfiable');
    expect(range.extra).toEqual({ size: 10 });
  });

  it('refuses streams without a valid internal assertion', async () => {
    const raw = new mediav1.MediaServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const code = await new Promise<status>((resolve) => {
      const s = raw.readMedia({ key: 'k', rangeStart: 0, rangeEnd: 0, hasRange: false }, new Metadata());
      s.on('data', () => {});
      s.on('error', (e: ServiceError) => resolve(e.code));
    });
    expect(code).toBe(status.UNAUTHENTICATED);
    const up = await new Promise<status>((resolve) => {
      const w = raw.uploadReviewable(new Metadata(), (e) => resolve(e ? e.code : status.OK));
      w.on('error', () => {});
      w.end();
    });
    expect(up).toBe(status.UNAUTHENTICATED);
    raw.close();
  });
});
