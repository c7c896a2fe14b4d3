/**
 * The farm (docs/farm.md, docs/api-notes.md "Farm"): jobs cut into chunks that agents claim
 * under leases. Records owns the jobs (FarmJob records) and runs every statement; the gateway
 * checks roles and bodies. Roles: submitting and agent work, every role but Viewer; job changes
 * and reports, the submitter, Admin, Supervisor or Coordinator (the submitter is checked by
 * records, which knows the job).
 */
import { AppError } from '@reelbase/lib-platform';
import type { farmv1 } from '@reelbase/proto';
import { defineRoute, Reply, type AnyRoute } from '../http/route.js';
import type { AuthedPrincipal } from '../domain/authed.principal.js';
import { recordJson } from '../mappers/record.mapper.js';
import { RecordOut } from '../schemas/record.schema.js';
import {
  ChunkPath,
  ChunksQuery,
  FarmChunkDone,
  FarmChunkList,
  FarmChunkOut,
  FarmClaim,
  FarmClaimed,
  FarmComplete,
  FarmFail,
  FarmHeartbeat,
  FarmJobCreate,
  FarmReport,
  JobPath,
} from '../schemas/farm.schema.js';
import type { RouteDeps } from './route.deps.js';

const TAGS = ['farm'];

function notViewer(what: string) {
  return (p: AuthedPrincipal): void => {
    if (p.role === 'Viewer') throw new AppError('forbidden', `a Viewer may not ${what}`);
  };
}

/** Viewers never; Artists only on their own jobs (records checks the submitter). */
const mayManage = notViewer('change farm jobs');

function chunkObject(c: farmv1.FarmChunk) {
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

/** `{"chunk","job"}` with the job record spliced in as records sent it. */
function chunkAndJob(chunk: farmv1.FarmChunk, job: string): Reply {
  return Reply.rawJson(`{"chunk":${JSON.stringify(chunkObject(chunk))},"job":${job}}`);
}

/** The four changes of a job's course, one route each. */
const JOB_CHANGES = [
  { action: 'pause', summary: 'Pause a job', description: 'From queued or running: no chunk is offered; held leases may still complete or fail.' },
  {
    action: 'resume',
    summary: 'Resume a paused job',
    description: 'From paused: the job is `running` when any of its chunks was ever claimed, else `queued`.',
  },
  {
    action: 'cancel',
    summary: 'Cancel a job',
    description: 'From queued, running, paused or failed: nothing is offered again and every held lease is `lease_lost`.',
  },
  {
    action: 'retry',
    summary: 'Retry a failed job',
    description:
      'From failed: the failed chunks are queued again with fresh attempts and `chunks_failed` goes back to 0; the job is ' +
      '`running` when any of its chunks was ever claimed, else `queued`.',
  },
] as const;

export function farmRoutes({ peers }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/farm/jobs',
      operationId: 'createFarmJob',
      summary: 'Submit a farm job (every role but Viewer).',
      description:
        'Creates a FarmJob record (status `queued`) and its chunks: the frame list expanded in order and cut into chunks of ' +
        '`chunk_size` frames, `index` from 0; without `frames` one chunk. `data` holds the body and `chunks_total`, ' +
        '`chunks_done`, `chunks_failed`, `attempts_failed` and `progress` (100 × done / total, rounded down). The record is ' +
        'queryable with `POST /entities/FarmJob/query`; its status and these fields change only through the farm routes. ' +
        'A job lists at most 100,000 frames and is cut into at most 10,000 chunks (422 at `["body","frames"]` beyond). ' +
        'A bad frame list, a `depends_on` id that is not a live FarmJob, a missing project: 422. Event: FarmJob `create`.',
      tags: TAGS,
      auth: 'bearer',
      authorize: notViewer('submit farm jobs'),
      body: FarmJobCreate,
      responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
      errors: [503],
      handler: async ({ body, ctx }) => {
        const out = await peers.farm.createJob(
          {
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
          },
          ctx,
        );
        return Reply.rawJson(recordJson(out.job!));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/claim',
      // The answer holds a lease: never stored, so never replayed.
      replayable: false,
      operationId: 'claimFarmChunk',
      summary: 'An agent claims the next due chunk (every role but Viewer; usually an API key).',
      description:
        'Hands out the queued chunk of highest job priority, then oldest job, then lowest index, among jobs of the pool ' +
        '(and `kinds`) whose status is `queued` or `running`, whose `depends_on` are all done and that have no `manager`. One ' +
        'SQL statement (`FOR UPDATE SKIP LOCKED`): any number of agents claiming at once, each chunk goes to exactly one. The ' +
        'answer holds a new `lease` (opaque, 192 random bits) valid `lease_seconds`; heartbeats extend it. A chunk whose lease ' +
        'ran out is due again with one more attempt counted; when that was its last attempt it is failed (and its job) instead ' +
        'of being handed out. The first claim of a job makes it `running` (an event). 204 when nothing is due.',
      tags: TAGS,
      auth: 'bearer',
      authorize: notViewer('claim farm chunks'),
      body: FarmClaim,
      responses: { 200: { description: 'The chunk, its lease and its job.', schema: FarmClaimed }, 204: { description: 'Nothing is due.' } },
      errors: [503],
      handler: async ({ body, ctx }) => {
        const out = await peers.farm.claim({ pool: body.pool, worker: body.worker, kinds: body.kinds ?? [], leaseSeconds: body.lease_seconds }, ctx);
        if (!out.chunk || !out.job) return Reply.text('', 'text/plain', 204);
        const c = out.chunk;
        const chunk = { id: c.id, index: c.index, frames: c.frames ?? null, attempt: c.attempt, lease: out.lease, lease_expires_at: c.leaseExpiresAt };
        return Reply.rawJson(`{"job":${recordJson(out.job)},"chunk":${JSON.stringify(chunk)}}`);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/chunks/{id}/heartbeat',
      operationId: 'heartbeatFarmChunk',
      summary: "Extend a chunk's lease (the lease holder).",
      description:
        "Extends the lease by the claim's `lease_seconds` from now; `progress` is kept on the chunk. No event. A lease that is not " +
        "the chunk's current one (claimed again, ran out, or the job was cancelled): 409 `lease_lost`. Unknown chunk: 404.",
      tags: TAGS,
      auth: 'bearer',
      authorize: notViewer('work on farm chunks'),
      params: ChunkPath,
      body: FarmHeartbeat,
      responses: { 200: { description: 'The chunk.', schema: FarmChunkOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.heartbeat({ chunkId: params.id, lease: body.lease, progress: body.progress }, ctx);
        return Reply.json(chunkObject(out.chunk!));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/chunks/{id}/complete',
      operationId: 'completeFarmChunk',
      summary: 'Complete a chunk (the lease holder).',
      description:
        "The chunk is done; the job's `chunks_done` and `progress` move (a FarmJob `update` event), and the last chunk makes the " +
        'job `done`, which offers the jobs depending on it. `output` is kept on the chunk: at most 64 KiB as compact JSON ' +
        '(422 `too_large` at `["body","output"]`). 409 `lease_lost` as for heartbeat; 404 for an unknown chunk.',
      tags: TAGS,
      auth: 'bearer',
      authorize: notViewer('work on farm chunks'),
      params: ChunkPath,
      body: FarmComplete,
      responses: { 200: { description: 'The chunk and its job.', schema: FarmChunkDone } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.completeChunk(
          { chunkId: params.id, lease: body.lease, outputJson: body.output === undefined ? undefined : JSON.stringify(body.output) },
          ctx,
        );
        return chunkAndJob(out.chunk!, recordJson(out.job!));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/chunks/{id}/fail',
      operationId: 'failFarmChunk',
      summary: 'Report a failed attempt (the lease holder).',
      description:
        "Counts an attempt (`attempts_failed` of the job, a FarmJob `update` event): the chunk is queued again until the job's " +
        '`max_attempts`, then it is failed, the job is `failed` and its other queued chunks are no longer offered (chunks already ' +
        'claimed may still complete or fail). 409 `lease_lost` as for heartbeat; 404 for an unknown chunk.',
      tags: TAGS,
      auth: 'bearer',
      authorize: notViewer('work on farm chunks'),
      params: ChunkPath,
      body: FarmFail,
      responses: { 200: { description: 'The chunk and its job.', schema: FarmChunkDone } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.failChunk({ chunkId: params.id, lease: body.lease, error: body.error }, ctx);
        return chunkAndJob(out.chunk!, recordJson(out.job!));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/jobs/{id}/report',
      operationId: 'reportFarmJob',
      summary: 'A bridge reports on a job an outside manager runs (the submitter, Admin, Supervisor, Coordinator).',
      description:
        'Sets the given fields of a job with a `manager` (status, `progress`, `chunks_done`, `chunks_failed`, `error`); one FarmJob ' +
        '`update` event with what changed. A job without a manager: 409 `not_tracked`. Other roles (and Artists on jobs they did ' +
        'not submit): 403; unknown job: 404.',
      tags: TAGS,
      auth: 'bearer',
      authorize: mayManage,
      params: JobPath,
      body: FarmReport,
      responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.reportJob(
          { jobId: params.id, status: body.status, progress: body.progress, chunksDone: body.chunks_done, chunksFailed: body.chunks_failed, error: body.error },
          ctx,
        );
        return Reply.rawJson(recordJson(out.job!));
      },
    }),
    ...JOB_CHANGES.map(({ action, summary, description }) =>
      defineRoute({
        method: 'post',
        path: `/farm/jobs/{id}/${action}`,
        operationId: `${action}FarmJob`,
        summary: `${summary} (the submitter, Admin, Supervisor, Coordinator).`,
        description: `${description} Any other starting status: 409 \`transition_not_allowed\`. Each change is a FarmJob \`update\` event.`,
        tags: TAGS,
        auth: 'bearer',
        authorize: mayManage,
        params: JobPath,
        responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
        errors: [404, 409, 503],
        handler: async ({ params, ctx }) => {
          const out = await peers.farm.changeJob({ jobId: params.id, action }, ctx);
          return Reply.rawJson(recordJson(out.job!));
        },
      }),
    ),
    defineRoute({
      method: 'get',
      path: '/farm/jobs/{id}/chunks',
      operationId: 'listFarmChunks',
      summary: "A job's chunks, in pages (any role).",
      description:
        'In index order, with each state, attempt, lease expiry, worker, error and output (leases themselves are never shown). ' +
        'A page holds at most `limit` chunks (1..500, default 100) and ends early once its chunks fill 4 MiB, so a page of ' +
        'large outputs is shorter; follow `next_cursor` until it is null. A cursor this route did not write: 422 at ' +
        '`["query","cursor"]`.',
      tags: TAGS,
      auth: 'bearer',
      params: JobPath,
      query: ChunksQuery,
      responses: { 200: { description: 'One page of chunks.', schema: FarmChunkList } },
      errors: [404, 503],
      handler: async ({ params, query, ctx }) => {
        const out = await peers.farm.listChunks({ jobId: params.id, limit: query.limit, cursor: query.cursor }, ctx);
        return Reply.json({ items: out.chunks.map(chunkObject), next_cursor: out.nextCursor ?? null });
      },
    }),
  ];
}
