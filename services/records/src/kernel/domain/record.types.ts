/**
 * The shapes the records domain works with, independent of gRPC and SQL.
 */

/** A JSON object as stored in `record.data`. */
export type DataObject = Record<string, unknown>;

/** One record as returned to callers; timestamps are ISO 8601 UTC with microseconds. */
export interface RecordView {
  id: string;
  entityType: string;
  projectId: string | null;
  status: string | null;
  active: boolean;
  thumbnailId: string | null;
  createdBy: string | null;
  createdAt: string;
  /** Also the ETag: compared exactly by If-Match. */
  updatedAt: string;
  data: DataObject;
}

/**
 * One record in its client form (docs/api-notes.md, Records): the JSON text a query answers with
 * (QueryResult.items), the columns under their API names.
 */
export interface ClientRecord {
  id: string;
  entity_type: string;
  project_id: string | null;
  status: string | null;
  active: boolean;
  thumbnail_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  data: DataObject;
}

/** What CreateRecord asks for. `dataJson` is parsed and checked by the domain. */
export interface CreateInput {
  entityType: string;
  /** Honoured only for service principals (auth creates the first User with a known id). */
  id?: string;
  projectId?: string | null;
  status?: string | null;
  active?: boolean;
  thumbnailId?: string | null;
  dataJson?: string;
  /** A task template code: its tasks are created with the record, in the same transaction. */
  taskTemplate?: string;
  /** The gateway's claimed Idempotency-Key: the create's statement stores its answer too. */
  idempotency?: { scope: string; claim: string };
}

/**
 * What UpdateRecord asks for. For the nullable columns `undefined` leaves the column as it is
 * and `null` clears it.
 */
export interface UpdateInput {
  entityType: string;
  id: string;
  projectId?: string | null;
  status?: string | null;
  active?: boolean;
  thumbnailId?: string | null;
  /** A JSON object merged key by key; a key set to null is removed. */
  dataJson?: string;
  ifMatch?: string;
}

/** A record in its client form (what the gateway answers for a record). */
export function toClientRecord(r: RecordView): ClientRecord {
  return {
    id: r.id,
    entity_type: r.entityType,
    project_id: r.projectId,
    status: r.status,
    active: r.active,
    thumbnail_id: r.thumbnailId,
    created_by: r.createdBy,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    data: r.data,
  };
}
