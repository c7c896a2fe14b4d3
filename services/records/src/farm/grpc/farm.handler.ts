/**
 * reelbase.records.v1.FarmService: proto messages ↔ the farm's domain calls, nothing more.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { farmv1 } from '@reelbase/proto';
import type { FarmService } from '../domain/farm.service.js';
import type { JobAction } from '../domain/farm.rules.js';
import type { FarmChunkRow } from '../domain/farm.ports.js';
import { toProtoRecord } from '../../kernel/grpc/record.proto.js';

/** The full proto name, used for registration and health checks. */
export const FARM_SERVICE_NAME = 'reelbase.records.v1.FarmService';

/** A chunk as a proto message; `attempt` is the attempt its current or last claim is. */
export function toProtoChunk(c: FarmChunkRow): farmv1.FarmChunk {
  // A held or finished chunk's claim was attempt `attempts + 1` unless the claim's own failure
  // was counted already (failed, or queued again after a failure).
  const attempt = c.state === 'leased' || c.state === 'done' ? c.attempts + 1 : Math.max(c.attempts, 1);
  return {
    id: c.id,
    jobId: c.jobId,
    index: c.index,
    frames: c.frames ?? undefined,
    state: c.state,
    attempt: c.claims === 0 ? 0 : attempt,
    leaseExpiresAt: c.leaseExpiresAt ?? undefined,
    progress: c.progress ?? undefined,
    worker: c.worker ?? undefined,
    error: c.error ?? undefined,
    outputJson: c.output === null || c.output === undefined ? undefined : JSON.stringify(c.output),
  };
}

export interface FarmHandlerDeps {
  farm: FarmService;
}

/** Builds the handlers registered with GrpcServer under {@link FARM_SERVICE_NAME}. */
export function farmHandlers({ farm }: FarmHandlerDeps): UnaryHandlers<farmv1.FarmServiceServer> {
  return {
    async createJob(req: farmv1.CreateJobRequest, ctx: CallContext) {
      const job = await farm.create(
        {
          projectId: req.projectId,
          name: req.name,
          kind: req.kind,
          pool: req.pool,
          priority: req.priority,
          frames: req.frames,
          chunkSize: req.chunkSize,
          payloadJson: req.payloadJson,
          versionId: req.versionId,
          taskId: req.taskId,
          maxAttempts: req.maxAttempts,
          dependsOn: req.dependsOn,
          manager: req.manager,
          externalId: req.externalId,
        },
        ctx,
      );
      return { job: toProtoRecord(job) };
    },

    async claim(req: farmv1.ClaimRequest, ctx: CallContext) {
      const out = await farm.claim({ pool: req.pool, worker: req.worker, kinds: req.kinds, leaseSeconds: req.leaseSeconds }, ctx);
      if (!out) return {};
      return { job: toProtoRecord(out.job), chunk: toProtoChunk(out.chunk), lease: out.lease };
    },

    async heartbeat(req: farmv1.HeartbeatRequest, ctx: CallContext) {
      return { chunk: toProtoChunk(await farm.heartbeat(req.chunkId, req.lease, req.progress, ctx)) };
    },

    async completeChunk(req: farmv1.CompleteChunkRequest, ctx: CallContext) {
      const out = await farm.complete(req.chunkId, req.lease, req.outputJson, ctx);
      return { chunk: toProtoChunk(out.chunk), job: toProtoRecord(out.job) };
    },

    async failChunk(req: farmv1.FailChunkRequest, ctx: CallContext) {
      const out = await farm.fail(req.chunkId, req.lease, req.error, ctx);
      return { chunk: toProtoChunk(out.chunk), job: toProtoRecord(out.job) };
    },

    async reportJob(req: farmv1.ReportJobRequest, ctx: CallContext) {
      const job = await farm.report(
        req.jobId,
        { status: req.status, progress: req.progress, chunksDone: req.chunksDone, chunksFailed: req.chunksFailed, error: req.error },
        ctx,
      );
      return { job: toProtoRecord(job) };
    },

    async changeJob(req: farmv1.ChangeJobRequest, ctx: CallContext) {
      return { job: toProtoRecord(await farm.change(req.jobId, req.action as JobAction, ctx)) };
    },

    async listChunks(req: farmv1.ListChunksRequest, ctx: CallContext) {
      const page = await farm.chunks(req.jobId, req.limit, req.cursor, ctx);
      return { chunks: page.chunks.map(toProtoChunk), nextCursor: page.nextCursor };
    },

    async getJob(req: farmv1.GetJobRequest, ctx: CallContext) {
      return { job: toProtoRecord(await farm.get(req.jobId, ctx)) };
    },
  };
}
