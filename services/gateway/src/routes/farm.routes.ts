/**
 * The farm (docs/farm.md, docs/api-notes.md "Farm"): jobs cut into chunks that agents claim
 * under leases. Records owns the jobs (FarmJob records) and runs every statement; the gateway
 * checks roles and bodies. Roles: submitting and agent work, every role but Viewer; job changes
 * and reports, the submitter, Admin, Supervisor or Coordinator (the submitter is checked by
 * records, which knows the job).
 */
import { farmPolicy } from '@reelbase/lib-platform';
import { defineRoute, Reply, type AnyRoute } from '../http/route.js';
import {
  chunkAndJobJson,
  chunkObject,
  chunkPageJson,
  claimedJson,
  claimRequest,
  completeChunkRequest,
  createJobRequest,
  failChunkRequest,
  heartbeatRequest,
  reportJobRequest,
} from '../mappers/farm.mapper.js';
import { recordJson } from '../mappers/record.mapper.js';
import { count } from '../schemas/common.schema.js';
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
import { NOT_VIEWER } from './route.roles.js';

const TAGS = ['farm'];
const L = farmPolicy.LIMITS;

/** Viewers never; Artists only on their own jobs (records checks the submitter). */
const MAY_MANAGE = { roles: NOT_VIEWER, to: 'change farm jobs' };
/** Agents at work on a chunk they hold. */
const AGENT = { roles: NOT_VIEWER, to: 'work on farm chunks' };

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
        `A job lists at most ${count(L.frames)} frames and is cut into at most ${count(L.chunks)} chunks (422 at \`["body","frames"]\` beyond). ` +
        'A bad frame list, a `depends_on` id that is not a live FarmJob, a missing project: 422. Event: FarmJob `create`.',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: NOT_VIEWER, to: 'submit farm jobs' },
      body: FarmJobCreate,
      responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
      errors: [503],
      handler: async ({ body, ctx }) => {
        const out = await peers.farm.createJob(createJobRequest(body), ctx);
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
        'of being handed out. The first claim of a job makes it `running` (an event). 204 when nothing is due. Only chunks of jobs ' +
        'in projects the caller may read are handed out (docs/api-notes.md, "Restricted projects"). An agent key created with ' +
        "`pools` claims only from them: another `pool` is 403 `forbidden` naming the key's pools.",
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: { roles: NOT_VIEWER, to: 'claim farm chunks' },
      body: FarmClaim,
      responses: { 200: { description: 'The chunk, its lease and its job.', schema: FarmClaimed }, 204: { description: 'Nothing is due.' } },
      errors: [503],
      handler: async ({ body, ctx }) => {
        const claimed = claimedJson(await peers.farm.claim(claimRequest(body), ctx));
        return claimed === undefined ? Reply.text('', 'text/plain', 204) : Reply.rawJson(claimed);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/farm/chunks/{id}/heartbeat',
      operationId: 'heartbeatFarmChunk',
      summary: "Extend a chunk's lease (the lease holder).",
      description:
        "Extends the lease by the claim's `lease_seconds` from now; `progress` is kept on the chunk. No event. A lease that is not " +
        "the chunk's current one (claimed again, ran out, or the job was cancelled): 409 `lease_lost`. Unknown chunk, or one of a " +
        'job in a project the caller may not read: 404.',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: AGENT,
      params: ChunkPath,
      body: FarmHeartbeat,
      responses: { 200: { description: 'The chunk.', schema: FarmChunkOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.heartbeat(heartbeatRequest(params.id, body), ctx);
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
        `job \`done\`, which offers the jobs depending on it. \`output\` is kept on the chunk: at most ${L.outputBytes / 1024} KiB as compact JSON ` +
        '(422 `too_large` at `["body","output"]`). 409 `lease_lost` as for heartbeat; 404 for an unknown chunk (as for heartbeat).',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: AGENT,
      params: ChunkPath,
      body: FarmComplete,
      responses: { 200: { description: 'The chunk and its job.', schema: FarmChunkDone } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        return Reply.rawJson(chunkAndJobJson(await peers.farm.completeChunk(completeChunkRequest(params.id, body), ctx)));
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
        'claimed may still complete or fail). 409 `lease_lost` as for heartbeat; 404 for an unknown chunk (as for heartbeat).',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: AGENT,
      params: ChunkPath,
      body: FarmFail,
      responses: { 200: { description: 'The chunk and its job.', schema: FarmChunkDone } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        return Reply.rawJson(chunkAndJobJson(await peers.farm.failChunk(failChunkRequest(params.id, body), ctx)));
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
      allow: MAY_MANAGE,
      params: JobPath,
      body: FarmReport,
      responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        const out = await peers.farm.reportJob(reportJobRequest(params.id, body), ctx);
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
        allow: MAY_MANAGE,
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
      path: '/farm/jobs/{id}',
      operationId: 'getFarmJob',
      summary: 'One FarmJob (any role; an agent reads the job of the chunk it holds).',
      description:
        'The FarmJob record, as `GET /entities/FarmJob/{id}` answers it: its status, `data` with the body it was submitted with ' +
        'and its counters. A job that does not exist, is retired, or is in a project the caller may not read: 404.',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      params: JobPath,
      responses: { 200: { description: 'The FarmJob.', schema: RecordOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => {
        const out = await peers.farm.getJob({ jobId: params.id }, ctx);
        return Reply.rawJson(recordJson(out.job!));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/farm/jobs/{id}/chunks',
      operationId: 'listFarmChunks',
      summary: "A job's chunks, in pages (any role).",
      description:
        'In index order, with each state, attempt, lease expiry, worker, error and output (leases themselves are never shown). ' +
        `A page holds at most \`limit\` chunks (${L.chunkPage.min}..${L.chunkPage.max}, default ${L.chunkPage.default}) and ends early once its ` +
        `chunks fill ${farmPolicy.CHUNK_PAGE_BYTES / 1024 ** 2} MiB, so a page of ` +
        'large outputs is shorter; follow `next_cursor` until it is null. A cursor this route did not write: 422 at ' +
        '`["query","cursor"]`. A job in a project the caller may not read: 404.',
      tags: TAGS,
      auth: 'bearer',
      params: JobPath,
      query: ChunksQuery,
      responses: { 200: { description: 'One page of chunks.', schema: FarmChunkList } },
      errors: [404, 503],
      handler: async ({ params, query, ctx }) => {
        return Reply.json(chunkPageJson(await peers.farm.listChunks({ jobId: params.id, limit: query.limit, cursor: query.cursor }, ctx)));
      },
    }),
  ];
}
