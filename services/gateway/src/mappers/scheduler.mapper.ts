/**
 * The scheduler's requests and answers (docs/api-notes.md, "Scheduler") between the REST JSON and
 * the schema service's SchedulerService: a body goes as its typed message and, for one release,
 * as the deprecated `body_json` too (a schema service of the previous release reads only that);
 * an answer is read from its typed message (docs/architecture.md, "Protocol buffers").
 */
import { schedulerCodec as codec, type JsonObject } from '@reelbase/lib-platform';
import type { schedulerv1 } from '@reelbase/proto';
import { answerText, typedList } from './answer.json.js';

/** A create or patch body as the request's typed `body` and deprecated `body_json`. */
export function scheduleBodyRequest(body: JsonObject): { bodyJson: string; body: schedulerv1.ScheduleBody } {
  return { bodyJson: JSON.stringify(body), body: codec.scheduleBodyToProto(body) };
}

/** A schedule answer (create, get, update) as JSON text. */
export const scheduleText = (res: { json: string; schedule?: schedulerv1.Schedule | undefined }): string =>
  answerText(res.schedule, codec.scheduleFromProto, res.json);

export const scheduleListText = (res: schedulerv1.ListSchedulesResponse): string =>
  answerText(typedList(res.items, res.json), (items) => ({ items: items.map(codec.scheduleFromProto) }), res.json);

export const scheduleDeletedText = (res: schedulerv1.DeleteScheduleResponse): string =>
  answerText(res.id === '' ? undefined : res, (r) => ({ id: r.id, deleted: r.deleted }), res.json);

export const runText = (res: schedulerv1.RunScheduleResponse): string => answerText(res.run, codec.runFromProto, res.json);

export const runListText = (res: schedulerv1.ListRunsResponse): string =>
  answerText(typedList(res.items, res.json), (items) => ({ items: items.map(codec.runFromProto), next_cursor: res.nextCursor ?? null }), res.json);
