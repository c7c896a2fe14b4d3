/**
 * The record as a proto message, for every module's handlers.
 */
import type { recordsv1 } from '@reelbase/proto';
import type { RecordView } from '../domain/record.types.js';

/** A domain record as a proto message; `data` travels JSON-encoded. */
export function toProtoRecord(r: RecordView): recordsv1.Record {
  return {
    id: r.id,
    entityType: r.entityType,
    projectId: r.projectId ?? undefined,
    status: r.status ?? undefined,
    active: r.active,
    thumbnailId: r.thumbnailId ?? undefined,
    createdBy: r.createdBy ?? undefined,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    dataJson: JSON.stringify(r.data),
  };
}

/**
 * The calls of `RecordsService` the shares module serves (shares/grpc/shares.handler.ts); the core
 * module serves the rest (core/grpc/records.handler.ts), and service.ts registers both together.
 */
export type ShareLinkCalls = 'createShareLink' | 'listShareLinks' | 'revokeShareLink' | 'openShare' | 'createGuestNote' | 'checkShareLink';
