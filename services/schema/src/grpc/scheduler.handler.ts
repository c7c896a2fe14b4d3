/**
 * reelbase.schema.v1.SchedulerService: proto messages ↔ the scheduler's use cases, nothing more.
 * Every answer is the JSON object the gateway returns as the response body.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { schedulerv1 } from '@reelbase/proto';
import type { SchedulerService } from '../domain/scheduler/scheduler.service.js';

/** The full proto name, used for registration and health checks. */
export const SCHEDULER_SERVICE_NAME = 'reelbase.schema.v1.SchedulerService';

export interface SchedulerHandlerDeps {
  scheduler: SchedulerService;
}

const json = (v: unknown): { json: string } => ({ json: JSON.stringify(v) });

export function schedulerHandlers({ scheduler }: SchedulerHandlerDeps): UnaryHandlers<schedulerv1.SchedulerServiceServer> {
  return {
    createSchedule: async (req: schedulerv1.CreateScheduleRequest, ctx: CallContext) => json(await scheduler.create(req.bodyJson, ctx)),
    listSchedules: async (_req: schedulerv1.ListSchedulesRequest, ctx: CallContext) => json(await scheduler.list(ctx)),
    getSchedule: async (req: schedulerv1.GetScheduleRequest, ctx: CallContext) => json(await scheduler.get(req.id, ctx)),
    updateSchedule: async (req: schedulerv1.UpdateScheduleRequest, ctx: CallContext) => json(await scheduler.update(req.id, req.bodyJson, ctx)),
    deleteSchedule: async (req: schedulerv1.DeleteScheduleRequest, ctx: CallContext) => json(await scheduler.delete(req.id, ctx)),
    runSchedule: async (req: schedulerv1.RunScheduleRequest, ctx: CallContext) => json(await scheduler.runNow(req.id, ctx)),
    listRuns: async (req: schedulerv1.ListRunsRequest, ctx: CallContext) =>
      json(await scheduler.runs(req.id, { limit: req.limit || undefined, cursor: req.cursor }, ctx)),
  };
}
