/**
 * reelbase.records.v1.RecordsService, the core module's calls (the share link calls are the shares
 * module's: shares/grpc/shares.handler.ts): proto messages ↔ domain calls, nothing more.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import { recordsv1 } from '@reelbase/proto';
import type { RecordService } from '../domain/record.service.js';
import type { KeyedWrites } from '../domain/keyed.writes.js';
import type { RecordViews } from '../domain/record.views.js';
import type { RecordQueries } from '../domain/record.query.js';
import type { SchemaAdmin } from '../domain/schema.admin.js';
import type { RenameKind } from '../domain/schema.rename.js';
import type { ClientRecord } from '../../kernel/domain/record.types.js';
import type { RecordSummaries } from '../domain/record.summary.js';
import { toProtoRecord, type ShareLinkCalls } from '../../kernel/grpc/record.proto.js';
import { claimResponseOf, keyedWriteOf } from '../../kernel/grpc/idempotency.proto.js';

/** The full proto name, used for registration and health checks. */
export const RECORDS_SERVICE_NAME = 'reelbase.records.v1.RecordsService';

/** A record in its client form (JSON text of the query statement) as a proto message. */
function fromClientJson(text: string): recordsv1.Record {
  const r = JSON.parse(text) as ClientRecord;
  const { entity_type: entityType, project_id: projectId, thumbnail_id: thumbnailId, created_by: createdBy, created_at: createdAt, updated_at: updatedAt } = r;
  return toProtoRecord({ id: r.id, entityType, projectId, status: r.status, active: r.active, thumbnailId, createdBy, createdAt, updatedAt, data: r.data });
}

/** absent → unchanged (undefined); present without value → cleared (null). */
function nullable(v: recordsv1.NullableString | undefined): string | null | undefined {
  if (v === undefined) return undefined;
  return v.value ?? null;
}

/** The domain services the handlers call (and nothing else). */
export interface RecordsHandlerDeps {
  records: RecordService;
  /** A create and a batch that carry their Idempotency-Key. */
  keyed: KeyedWrites;
  admin: SchemaAdmin;
  views: RecordViews;
  queries: RecordQueries;
  summaries: RecordSummaries;
}

/**
 * Builds the core module's handlers, registered with GrpcServer under {@link RECORDS_SERVICE_NAME}
 * together with the shares module's.
 */
export function recordsHandlers({
  records,
  keyed,
  admin,
  views,
  queries,
  summaries,
}: RecordsHandlerDeps): Omit<UnaryHandlers<recordsv1.RecordsServiceServer>, ShareLinkCalls> {
  return {
    async createRecord(req: recordsv1.CreateRecordRequest, ctx: CallContext): Promise<recordsv1.CreateRecordResponse> {
      const input = {
        entityType: req.entityType,
        id: req.id,
        projectId: req.projectId,
        status: req.status,
        active: req.active,
        thumbnailId: req.thumbnailId,
        dataJson: req.dataJson,
        taskTemplate: req.taskTemplate,
        idempotency: req.idempotency,
      };
      if (!req.keyed) return { record: toProtoRecord(await records.create(input, ctx)) };
      // The key travels with the create: claimed, written and answered in this one call.
      const r = await keyed.create(input, keyedWriteOf(req.keyed), ctx);
      return 'key' in r ? { key: claimResponseOf(r.key) } : { record: toProtoRecord(r.done) };
    },

    async batchRecords(req: recordsv1.BatchRecordsRequest, ctx: CallContext): Promise<recordsv1.BatchRecordsResponse> {
      if (!req.keyed) return { json: await records.batch(req.requestsJson, ctx) };
      const r = await keyed.batch(req.requestsJson, keyedWriteOf(req.keyed), ctx);
      return 'key' in r ? { json: '', key: claimResponseOf(r.key) } : { json: r.done };
    },

    async summarizeRecords(req: recordsv1.SummarizeRecordsRequest, ctx: CallContext) {
      const answer = await summaries.summarize(
        { entityType: req.entityType, filtersJson: req.filtersJson, summaryFieldsJson: req.summaryFieldsJson, groupingJson: req.groupingJson },
        ctx,
      );
      return { json: JSON.stringify(answer) };
    },

    async getRecord(req: recordsv1.GetRecordRequest, ctx: CallContext) {
      return { record: toProtoRecord(await records.get(req.entityType, req.id, ctx)) };
    },

    async updateRecord(req: recordsv1.UpdateRecordRequest, ctx: CallContext) {
      const record = await records.update(
        {
          entityType: req.entityType,
          id: req.id,
          projectId: nullable(req.projectId),
          status: nullable(req.status),
          active: req.active,
          thumbnailId: nullable(req.thumbnailId),
          dataJson: req.dataJson,
          ifMatch: req.ifMatch,
        },
        ctx,
      );
      return { record: toProtoRecord(record) };
    },

    async retireRecord(req: recordsv1.RetireRecordRequest, ctx: CallContext) {
      return { record: toProtoRecord(await records.retire(req.entityType, req.id, req.ifMatch, ctx)) };
    },

    async reviveRecord(req: recordsv1.ReviveRecordRequest, ctx: CallContext) {
      return { record: toProtoRecord(await records.revive(req.entityType, req.id, ctx)) };
    },

    async applySchema(req: recordsv1.ApplySchemaRequest, ctx: CallContext) {
      await admin.applySchema(req.version, req.snapshotJson, ctx, req.refuseRemovedInUse === true);
      return {};
    },

    async applyRename(req: recordsv1.ApplyRenameRequest, ctx: CallContext) {
      const kind = req.kind as RenameKind;
      const rewritten = await admin.applyRename(
        { journalId: req.journalId, kind, entityType: req.entityType, field: req.field, from: req.from, to: req.to },
        ctx,
      );
      return { rewritten };
    },

    async countUsage(_req: recordsv1.CountUsageRequest, ctx: CallContext) {
      return { usageJson: JSON.stringify(await admin.countUsage(ctx)) };
    },

    async listNotes(req: recordsv1.ListNotesRequest, ctx: CallContext) {
      return { notes: (await views.notes(req.entityType, req.recordId, ctx)).map(toProtoRecord) };
    },

    async listUserTasks(req: recordsv1.ListUserTasksRequest, ctx: CallContext) {
      return { tasks: (await views.userTasks(req.userId, ctx)).map(toProtoRecord) };
    },

    async getTimesheet(req: recordsv1.GetTimesheetRequest, ctx: CallContext) {
      const sheet = await views.timesheet(req.userId, req.from, req.to, ctx);
      return { timeLogs: sheet.timeLogs.map(toProtoRecord), totalMinutes: sheet.totalMinutes };
    },

    async listRestrictedProjects(_req: recordsv1.ListRestrictedProjectsRequest, ctx: CallContext) {
      return { projects: await views.restrictedProjects(ctx) };
    },

    async queryRecords(req: recordsv1.QueryRecordsRequest, ctx: CallContext) {
      const result = await queries.query(
        {
          entityType: req.entityType,
          filtersJson: req.filtersJson,
          fieldsJson: req.fieldsJson,
          order: req.order.map((o) => ({ field: o.field, direction: o.direction || undefined })),
          limit: req.limit,
          cursor: req.cursor,
          includeTotal: req.includeTotal,
          includeRetired: req.includeRetired,
        },
        ctx,
      );
      const page = { nextCursor: result.nextCursor ?? undefined, total: result.total };
      // The records as PostgreSQL wrote them, one JSON array; `items` only for a caller that did not ask so.
      if (req.answerJson) return { items: [], itemsJson: `[${result.items.join(',')}]`, ...page };
      return { items: result.items.map(fromClientJson), ...page };
    },
  };
}
