/**
 * The notes of one record (docs/api-notes.md, "Work views"): every live Note whose `links`
 * name it, oldest first.
 */
import type { AnyRoute } from '../http/route.js';
import { defineRoute, Reply } from '../http/route.js';
import { recordsJson } from '../mappers/record.mapper.js';
import { NotesPath, RecordList } from '../schemas/views.schema.js';
import type { RouteDeps } from './route.deps.js';

export function noteRoutes({ peers }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/entities/{entity_type}/{record_id}/notes',
      operationId: 'listRecordNotes',
      summary: 'The notes attached to one record, oldest first.',
      description:
        'Every live Note whose `data.links` contains `{"type": entity_type, "id": record_id}`, oldest first ' +
        '(retired notes are left out). Any authenticated user. A record that does not exist, is retired or is of ' +
        'another type: 404. Not paged: the whole list comes in one answer; past 12 MiB of records it is 413 ' +
        '`payload_too_large` (read it in pages with `POST /entities/Note/query`).',
      tags: ['entities'],
      auth: 'bearer',
      params: NotesPath,
      responses: { 200: { description: 'The notes.', schema: RecordList } },
      errors: [404, 413, 503],
      handler: async ({ params, ctx }) => {
        const res = await peers.records.listNotes({ entityType: params.entity_type, recordId: params.record_id }, ctx);
        return Reply.rawJson(recordsJson(res.notes));
      },
    }),
  ];
}
