/**
 * Reads of the event log. Each read is one statement, so the page and `last_id` come from
 * the same snapshot: `last_id` is never below an id in the page.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlIsoMicros, sqlRows } from '@reelbase/lib-platform';
import type { ListQuery } from '../domain/list.query.js';
import type { EventLogReader, EventPage } from '../domain/ports.js';

/**
 * Bytes counted for one event besides its `changes` text: ids, type, action, timestamp and
 * message framing, rounded up.
 */
export const EVENT_OVERHEAD_BYTES = 256;

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
  scanned: string | null;
}

export interface EventLogRepositoryOptions {
  /**
   * Largest page in bytes (changes text plus {@link EVENT_OVERHEAD_BYTES} per event). A page
   * always holds at least one event, so any event the log accepted can be read.
   */
  pageMaxBytes: number;
}

export class EventLogRepository implements EventLogReader {
  constructor(
    private readonly orm: MikroORM,
    private readonly opts: EventLogRepositoryOptions,
  ) {}

  /**
   * One page of the log (see {@link ListQuery}) and the highest id in the log. The page holds
   * at most `limit` rows and stops early (`truncated`) once the next row would take it past the
   * byte budget; the sizes come from the stored `changes_bytes`, so rows left out are never read.
   */
  list(q: ListQuery): Promise<EventPage> {
    return guarded(() => this.page(q));
  }

  private async page(q: ListQuery): Promise<EventPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.after !== undefined) {
      where.push('l.id > ?');
      params.push(q.after);
    } else if (q.before !== undefined) {
      where.push('l.id < ?');
      params.push(q.before);
    }
    if (q.entityType !== undefined) {
      where.push('l.entity_type = ?');
      params.push(q.entityType);
    }
    if (q.projectId !== undefined) {
      where.push('l.project_id = ?');
      params.push(q.projectId);
    }
    if (q.hiddenProjectIds !== undefined && q.hiddenProjectIds.length > 0) {
      // Left out before the limit and the byte budget count, so a page is full of what remains.
      where.push('(l.project_id is null or l.project_id <> all(?::uuid[]))');
      params.push(q.hiddenProjectIds);
    }
    params.push(q.limit, this.opts.pageMaxBytes);
    const order = q.after !== undefined ? 'asc' : 'desc';
    const sql = `
      select m.last_id, e.*
      from (select coalesce(max(id), 0) as last_id from "events"."event_log") m
      left join lateral (
        select l.id, l.entity_type, l.entity_id, l.project_id, l.action, l.actor,
               l.changes::text as changes_json,
               ${sqlIsoMicros('l.created_at')} as created_at,
               p.scanned
        from (
          select c.id, count(*) over () as scanned,
                 row_number() over w as rn, sum(c.bytes) over w as running
          from (
            select l.id, l.changes_bytes + ${EVENT_OVERHEAD_BYTES} as bytes
            from "events"."event_log" l
            ${where.length ? `where ${where.join(' and ')}` : ''}
            order by l.id ${order}
            limit ?
          ) c
          window w as (order by c.id ${order})
        ) p
        join "events"."event_log" l on l.id = p.id
        where p.rn = 1 or p.running <= ?
        order by l.id ${order}
      ) e on true`;
    const rows = await sqlRows<PageRow>(this.orm.em.getConnection().getKnex(), sql, params);
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
    const scanned = Number(rows[0]?.scanned ?? 0);
    return { items, lastId, truncated: items.length < scanned };
  }
}
