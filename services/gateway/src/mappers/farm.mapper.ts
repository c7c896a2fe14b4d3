/**
 * The farm's gRPC messages and the farm routes' bodies (docs/api-notes.md, "Farm"): request bodies
 * → FarmService requests, chunks and claims → their client form. Jobs are records, spliced in as
 * records sent them (record.mapper.ts).
 */
import type { farmv1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { FarmClaim, FarmComplete, FarmFail, FarmHeartbeat, FarmJobCreate, FarmReport } from '../schemas/farm.schema.js';
import { recordJson } from './record.mapper.js';

/** POST /farm/jobs → CreateJob. */
export function createJobRequest(body: z.output<typeof FarmJobCreate>): farmv1.CreateJobRequest {
  return {
    projectId: body.project_id,
    name: body.name,
    kind: body.kind,
    pool: body.pool,
    priority: body.priority,
    frames: body.frames,
    chunkSize: body.chunk_size,
    payloadJson: body.payload === undefined ? undefined : JSON.stringify(body.payload),
    versionId: body.version_id,
    taskId: body.task_id,
    maxAttempts: body.max_attempts,
    dependsOn: body.depends_on,
    manager: body.manager,
    externalId: body.external_id,
  };
}

/** POST /farm/claim → Claim. */
export function claimRequest(body: z.output<typeof FarmClaim>): farmv1.ClaimRequest {
  return { pool: body.pool, worker: body.worker, kinds: body.kinds ?? [], leaseSeconds: body.lease_seconds };
}

/** POST /farm/chunks/{id}/heartbeat → Heartbeat. */
export function heartbeatRequest(chunkId: string, body: z.output<typeof FarmHeartbeat>): farmv1.HeartbeatRequest {
  return { chunkId, lease: body.lease, progress: body.progress };
}

/** POST /farm/chunks/{id}/complete → CompleteChunk (the output as JSON text). */
export function completeChunkRequest(chunkId: string, body: z.output<typeof FarmComplete>): farmv1.CompleteChunkRequest {
  return { chunkId, lease: body.lease, outputJson: body.output === undefined ? undefined : JSON.stringify(body.output) };
}

/** POST /farm/chunks/{id}/fail → FailChunk. */
export function failChunkRequest(chunkId: string, body: z.output<typeof FarmFail>): farmv1.FailChunkRequest {
  return { chunkId, lease: body.lease, error: body.error };
}

/** POST /farm/jobs/{id}/report → ReportJob. */
export function reportJobRequest(jobId: string, body: z.output<typeof FarmReport>): farmv1.ReportJobRequest {
  return { jobId, status: body.status, progress: body.progress, chunksDone: body.chunks_done, chunksFailed: body.chunks_failed, error: body.error };
}

/** A chunk in its client form (`FarmChunk`); its lease itself is never shown. */
export function chunkObject(c: farmv1.FarmChunk): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: c.id,
    job_id: c.jobId,
    index: c.index,
    frames: c.frames ?? null,
    state: c.state,
    attempt: c.attempt,
    lease_expires_at: c.leaseExpiresAt ?? null,
    progress: c.progress ?? null,
    worker: c.worker ?? null,
    error: c.error ?? null,
  };
  if (c.outputJson !== undefined) out.output = JSON.parse(c.outputJson);
  return out;
}

/** A completed or failed chunk with its job (`FarmChunkResult`) as JSON text, the job spliced in as records sent it. */
export function chunkAndJobJson(out: farmv1.CompleteChunkResponse | farmv1.FailChunkResponse): string {
  return `{"chunk":${JSON.stringify(chunkObject(out.chunk!))},"job":${recordJson(out.job!)}}`;
}

/** A claim's answer (`FarmClaimed`) as JSON text; undefined when nothing was due. */
export function claimedJson(out: farmv1.ClaimResponse): string | undefined {
  if (!out.chunk || !out.job) return undefined;
  const c = out.chunk;
  const chunk = { id: c.id, index: c.index, frames: c.frames ?? null, attempt: c.attempt, lease: out.lease, lease_expires_at: c.leaseExpiresAt };
  return `{"job":${recordJson(out.job)},"chunk":${JSON.stringify(chunk)}}`;
}

/** One page of chunks (`FarmChunkPage`). */
export function chunkPageJson(out: farmv1.ListChunksResponse) {
  return { items: out.chunks.map(chunkObject), next_cursor: out.nextCursor ?? null };
}
