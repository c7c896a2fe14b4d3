/**
 * Schemas of the work views (docs/api-notes.md, "Work views"): a record's notes, a user's tasks
 * and timesheet.
 */
import { z } from 'zod';
import { EntityTypeCode, Uuid } from './common.schema.js';
import { RecordOut } from './record.schema.js';

export const NotesPath = z.strictObject({ entity_type: EntityTypeCode, record_id: Uuid });

export const UserPath = z.strictObject({ id: Uuid });

const IsoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe('A calendar date, YYYY-MM-DD.');

export const TimesheetQuery = z.strictObject({
  from: IsoDate.describe('First day, included (YYYY-MM-DD).'),
  to: IsoDate.describe('Last day, included (YYYY-MM-DD); at most 365 days after `from`.'),
});

export const RecordList = z.object({ items: z.array(RecordOut) }).meta({ id: 'RecordList', description: 'Records, in the order the route states.' });

export const TimesheetOut = z
  .object({
    items: z.array(RecordOut).describe('The TimeLogs, by `data.date`, then creation.'),
    total_minutes: z.number().int().describe('The sum of the listed TimeLogs’ `data.minutes`.'),
  })
  .meta({ id: 'Timesheet', description: "One user's TimeLogs within a date range." });
