/**
 * A user's work (docs/api-notes.md, "Work views"): the tasks assigned to them and their
 * timesheet. The user themself, an Admin, a Supervisor or a Coordinator may read them; anyone
 * else gets 403 before the request is validated.
 */
import { AppError, MAX_TIMESHEET_DAYS, timesheetRangeProblems } from '@reelbase/lib-platform';
import type { AnyRoute } from '../http/route.js';
import { defineRoute, Reply } from '../http/route.js';
import { recordsJson } from '../mappers/record.mapper.js';
import { RecordList, TimesheetOut, TimesheetQuery, UserPath } from '../schemas/views.schema.js';
import type { RouteDeps } from './route.deps.js';
import { readsUserViews } from './route.roles.js';

const ACCESS =
  'The user themself, an Admin, a Supervisor or a Coordinator; anyone else 403 (checked before the request is ' +
  'validated). An unknown or retired user: 404 (not an empty list, so a mistyped id is noticed). Not paged; an ' +
  'answer past 12 MiB of records is 413 `payload_too_large` (read it in pages with `POST /entities/{Type}/query`).';

export function userRoutes({ peers }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/users/{id}/tasks',
      operationId: 'listUserTasks',
      summary: 'The live tasks assigned to a user, oldest first.',
      description: `Every live Task whose \`data.assignees\` contains \`{"type": "User", "id": id}\`, oldest first. ${ACCESS}`,
      tags: ['users'],
      auth: 'bearer',
      params: UserPath,
      authorize: readsUserViews,
      responses: { 200: { description: 'The tasks.', schema: RecordList } },
      errors: [404, 413, 503],
      handler: async ({ params, ctx }) => Reply.rawJson(recordsJson((await peers.records.listUserTasks({ userId: params.id }, ctx)).tasks)),
    }),
    defineRoute({
      method: 'get',
      path: '/users/{id}/timesheet',
      operationId: 'getUserTimesheet',
      summary: "A user's TimeLogs dated from `from` to `to` (both included) and their total minutes.",
      description:
        `The live TimeLogs whose \`data.user\` is the user and whose \`data.date\` lies in [from, to], by date, then ` +
        `creation; \`total_minutes\` sums their \`data.minutes\`. A missing or malformed date is 422 on that query ` +
        `parameter; \`from\` after \`to\`, or a range longer than ${MAX_TIMESHEET_DAYS} days, is 422 on \`from\`. ${ACCESS}`,
      tags: ['users'],
      auth: 'bearer',
      params: UserPath,
      query: TimesheetQuery,
      authorize: readsUserViews,
      responses: { 200: { description: 'The timesheet.', schema: TimesheetOut } },
      errors: [404, 413, 503],
      handler: async ({ params, query, ctx }) => {
        const problems = timesheetRangeProblems(query.from, query.to);
        if (problems.length) throw AppError.invalid(problems);
        const res = await peers.records.getTimesheet({ userId: params.id, from: query.from, to: query.to }, ctx);
        return Reply.rawJson(recordsJson(res.timeLogs, { total_minutes: res.totalMinutes }));
      },
    }),
  ];
}
