/**
 * Reads of the event log. Each read is one statement, so the page and `last_id` come from
 * the same snapshot: `last_id` is never below an id in the page.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { dbError } from '@reelbase/lib-platform';
import type { ListQuery } from '../domain/list.query.js';

/** A log row as read, with `changes` still as JSON text. */
export interface StoredEvent {
  id: number;
  entityType: string;
  entityId: string;
  projectId: string | null;
  action: string;
  actor: string | null;
  changesJson: string;
  createdAt: string;
}

export interface EventPage {
  items: StoredEvent[];
  lastId: number;
}

/** Microsecond-precise UTC timestamp, the format every created_at leaves the service in. */
export const ISO_US = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

interface PageRow {
  last_id: string;
  id: string | null;
  entity_type: string;
  entity_id: string;
  project_id: string | null;
  action: string;
  actor: string | null;
  changes_json: string;
  created_at: string;
}

export class EventLogRepository {
  constructor(private readonly orm: MikroORM) {}

  /** One page of the log (see {@link ListQuery}) and the highest id in the log. */
  async list(q: ListQuery): Promise<EventPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.after !== undefined) {
      where.push('l.id > ?');
      params.push(q.after);
    }
    if (q.entityType !== undefined) {
      where.push('l.entity_type = ?');
      params.push(q.entityType);
    }
    if (q.projectId !== undefined) {
      where.push('l.project_id = ?');
      params.push(q.projectId);
    }
    params.push(q.limit);
    const order = q.after !== undefined ? 'asc' : 'desc';
    const sql = `
      select m.last_id, e.*
      from (select coalesce(max(id), 0) as last_id from "events"."event_log") m
      left join lateral (
        select l.id, l.entity_type, l.entity_id, l.project_id, l.action, l.actor,
               l.changes::text as changes_json,
               to_char(l.created_at at time zone 'UTC', ${ISO_US}) as created_at
        from "events"."event_log" l
        ${where.length ? `where ${where.join(' and ')}` : ''}
        order by l.id ${order}
        limit ?
      ) e on true`;
    let rows: PageRow[];
    try {
      rows = await this.orm.em.getConnection().execute<PageRow[]>(sql, params);
    } catch (err) {
      dbError(err);
    }
    const lastId = Number(rows[0]?.last_id ?? 0);
    const items = rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        id: Number(r.id),
        entityType: r.entity_type,
        entityId: r.entity_id,
        projectId: r.project_id,
        action: r.action,
        actor: r.actor,
        changesJson: r.changes_json,
        createdAt: r.created_at,
      }));
    return { items, lastId };
  }
}
