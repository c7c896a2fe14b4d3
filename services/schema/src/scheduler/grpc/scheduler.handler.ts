/**
 * reelbase.schema.v1.SchedulerService: proto messages ↔ the scheduler's use cases, nothing more.
 * A body is read from its typed message (from the deprecated `body_json` only when a gateway of
 * the previous release left the typed one out); every answer is typed, with the deprecated `json`
 * filled beside it for one release (docs/architecture.md, "Protocol buffers").
 */
import { schedulerCodec as codec, type CallContext, type JsonObject, type UnaryHandlers } from '@reelbase/lib-platform';
import type { schedulerv1 } from '@reelbase/proto';
import type { BodyInput } from '../../kernel/domain/bodies.js';
import type { SchedulerService } from '../domain/scheduler.service.js';

/** The full proto name, used for registration and health checks. */
export const SCHEDULER_SERVICE_NAME = 'reelbase.schema.v1.SchedulerService';

export interface SchedulerHandlerDeps {
  scheduler: SchedulerService;
}

const bodyOf = (req: { body?: schedulerv1.ScheduleBody | undefined; bodyJson: string }): BodyInput =>
  req.body ? codec.scheduleBodyFromProto(req.body) : req.bodyJson;

const schedule = (s: JsonObject) => ({ json: JSON.stringify(s), schedule: codec.scheduleToProto(s) });

export function schedulerHandlers({ scheduler }: SchedulerHandlerDeps): UnaryHandlers<schedulerv1.SchedulerServiceServer> {
  return {
    createSchedule: async (req: schedulerv1.CreateScheduleRequest, ctx: CallContext) => schedule(await scheduler.create(bodyOf(req), ctx)),
    listSchedules: async (_req: schedulerv1.ListSchedulesRequest, ctx: CallContext) => {
      const out = await scheduler.list(ctx);
      return { json: JSON.stringify(out), items: out.items.map(codec.scheduleToProto) };
    },
    getSchedule: async (req: schedulerv1.GetScheduleRequest, ctx: CallContext) => schedule(await scheduler.get(req.id, ctx)),
    updateSchedule: async (req: schedulerv1.UpdateScheduleRequest, ctx: CallContext) => schedule(await scheduler.update(req.id, bodyOf(req), ctx)),
    deleteSchedule: async (req: schedulerv1.DeleteScheduleRequest, ctx: CallContext) => {
      const out = await scheduler.delete(req.id, ctx);
      return { json: JSON.stringify(out), id: out.id, deleted: out.deleted };
    },
    runSchedule: async (req: schedulerv1.RunScheduleRequest, ctx: CallContext) => {
      const run = await scheduler.runNow(req.id, ctx);
      return { json: JSON.stringify(run), run: codec.runToProto(run as unknown as JsonObject) };
    },
    listRuns: async (req: schedulerv1.ListRunsRequest, ctx: CallContext) => {
      const out = await scheduler.runs(req.id, { limit: req.limit || undefined, cursor: req.cursor }, ctx);
      return {
        json: JSON.stringify(out),
        items: out.items.map((r) => codec.runToProto(r as unknown as JsonObject)),
        nextCursor: out.next_cursor ?? undefined,
      };
    },
  };
}
