/**
 * The reads of sync (docs/api-notes.md, "Sync"): mappings both ways, and for a page of the event log
 * what GET /sync/changes shows of each event — whether it is a record's, the record now (null once
 * retired), its external ids, and whether the write was made by a given source's import (no echo).
 * A record in a project the caller may not read (docs/api-notes.md, "Restricted projects") is not
 * there for them: its mappings are not listed and its events are no record's events (left out).
 */
import { AppError, isUuid, type CallContext, type Problem } from '@reelbase/lib-platform';
import { membershipOf } from '../../kernel/domain/project.readers.js';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { ClientRecord } from '../../kernel/domain/record.types.js';
import { SYNC_MAX_EXTERNAL_ID, SYNC_SOURCE } from './sync.input.js';
import type { SyncMapping, SyncStore } from './sync.ports.js';

/** The most mappings one read answers. */
export const SYNC_MAPPINGS_MAX = 1000;

export interface MappingQuery {
  source?: string;
  entityType?: string;
  externalId?: string;
  id?: string;
}

export interface ChangeEventRef {
  eventId: number;
  entityId: string;
  createdAt: string;
  /** The event's entity type (absent from an older gateway: then the record's existence alone decides). */
  entityType?: string;
}

export interface ChangeInfo {
  event_id: number;
  /**
   * True only for a record's own event: `entity_id` names a record of the record store (retired or not)
   * and `entity_type` is that record's type, or a type since renamed to it. Anything else — schema,
   * addon, action and schedule events, and the site-sync states (`SiteSync`) whose `entity_id` is their
   * Representation's — is not a record's event and is left out of changes.
   */
  is_record: boolean;
  record: ClientRecord | null;
  external_ids: Record<string, string>;
  /** Written by the asked source's import. */
  echo: boolean;
}

/**
 * Whether an event of type `eventType` is about a record now of type `recordType`: the same type, or one
 * `eventType` became through entity type renames (in any number of steps; a rename rewrites the records'
 * type but not the events already in the log).
 */
export function typeMatcher(renames: readonly { from: string; to: string }[]): (eventType: string, recordType: string) => boolean {
  const next = new Map<string, string[]>();
  for (const r of renames) next.set(r.from, [...(next.get(r.from) ?? []), r.to]);
  return (eventType, recordType) => {
    const seen = new Set([eventType]);
    const todo = [eventType];
    for (let t = todo.pop(); t !== undefined; t = todo.pop()) {
      if (t === recordType) return true;
      for (const n of next.get(t) ?? []) if (!seen.has(n)) (seen.add(n), todo.push(n));
    }
    return false;
  };
}

const mappingOut = (m: SyncMapping) => ({ source: m.source, entity_type: m.entityType, external_id: m.externalId, id: m.id });

export class SyncReads {
  constructor(private readonly store: SyncStore) {}

  /** `?id=` or `?source=` (with optional `entity_type`, `external_id`); 422 for anything else. */
  async mappings(q: MappingQuery, ctx: CallContext): Promise<{ items: ReturnType<typeof mappingOut>[] }> {
    const problems: Problem[] = [];
    if (q.id !== undefined) {
      if (q.source !== undefined || q.entityType !== undefined || q.externalId !== undefined) {
        problems.push({ loc: ['id'], msg: 'Give either id or source (with entity_type and external_id), not both', type: 'value_error' });
      } else if (!isUuid(q.id)) problems.push({ loc: ['id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    } else if (q.source === undefined) {
      problems.push({ loc: ['source'], msg: 'Field required: give source (with entity_type and external_id) or id', type: 'missing' });
    } else {
      if (!SYNC_SOURCE.test(q.source))
        problems.push({ loc: ['source'], msg: `String should match pattern '${SYNC_SOURCE.source}'`, type: 'string_pattern_mismatch' });
      if (q.externalId !== undefined && q.entityType === undefined) {
        problems.push({ loc: ['entity_type'], msg: 'Field required with external_id', type: 'missing' });
      }
      if (q.externalId !== undefined && (q.externalId.length < 1 || q.externalId.length > SYNC_MAX_EXTERNAL_ID)) {
        problems.push({ loc: ['external_id'], msg: `String should have 1 to ${SYNC_MAX_EXTERNAL_ID} characters`, type: 'string_length' });
      }
    }
    if (problems.length) throw AppError.invalid(problems);
    const rows = await this.store.findMappings(q.id !== undefined ? { id: q.id.toLowerCase() } : q, SYNC_MAPPINGS_MAX, membershipOf(ctx.principal));
    return { items: rows.map(mappingOut) };
  }

  /** The type test of {@link typeMatcher}; the renames are read only when an event's type differs from its record's. */
  private async typeMatcher(
    events: readonly ChangeEventRef[],
    byId: ReadonlyMap<string, StoredRecord>,
  ): Promise<(eventType: string, recordType: string) => boolean> {
    const differs = events.some((e) => {
      const row = isUuid(e.entityId) ? byId.get(e.entityId.toLowerCase()) : undefined;
      return row !== undefined && e.entityType !== undefined && e.entityType !== row.entityType;
    });
    return typeMatcher(differs ? await this.store.typeRenames() : []);
  }

  /** What changes shows of each event, in the order given; a record the caller may not read is none (`is_record` false). */
  async changes(events: readonly ChangeEventRef[], source: string | undefined, ctx: CallContext): Promise<{ items: ChangeInfo[] }> {
    if (source !== undefined && !SYNC_SOURCE.test(source)) {
      throw AppError.invalid([{ loc: ['source'], msg: `String should match pattern '${SYNC_SOURCE.source}'`, type: 'string_pattern_mismatch' }]);
    }
    const refs = events.filter((e) => isUuid(e.entityId));
    const ids = [...new Set(refs.map((e) => e.entityId.toLowerCase()))];
    const [rows, mappings, echoes] = await Promise.all([
      this.store.findMany(ids, membershipOf(ctx.principal)),
      this.store.mappingsOf(ids),
      source === undefined
        ? Promise.resolve(new Set<number>())
        : this.store.echoes(
            source,
            refs.map((e) => ({ id: e.entityId.toLowerCase(), at: e.createdAt })),
          ),
    ]);
    const echoed = new Set([...echoes].map((k) => refs[k]!.eventId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const ofItsType = await this.typeMatcher(events, byId);
    const external = new Map<string, Record<string, string>>();
    for (const m of mappings) {
      const ext = external.get(m.id) ?? {};
      ext[m.source] = m.externalId;
      external.set(m.id, ext);
    }
    return {
      items: events.map((e) => {
        const id = e.entityId.toLowerCase();
        const row = isUuid(e.entityId) ? byId.get(id) : undefined;
        const record: ClientRecord | null =
          row && !row.retired
            ? {
                id: row.id,
                entity_type: row.entityType,
                project_id: row.projectId,
                status: row.status,
                active: row.active,
                thumbnail_id: row.thumbnailId,
                created_by: row.createdBy,
                created_at: row.createdAt,
                updated_at: row.updatedAt,
                data: row.data,
              }
            : null;
        const isRecord = row !== undefined && (e.entityType === undefined || ofItsType(e.entityType, row.entityType));
        return { event_id: e.eventId, is_record: isRecord, record, external_ids: external.get(id) ?? {}, echo: echoed.has(e.eventId) };
      }),
    };
  }
}
