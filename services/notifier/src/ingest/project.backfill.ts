/**
 * Finds the project of the notifications written before notifications kept it
 * (store/notification-project.migration.ts): reads their events from the log, from the lowest
 * event id whose project is unknown on, a page at a time, and stores each event's `project_id`
 * on its notifications (docs/api-notes.md, "Restricted projects": until then such a notification
 * is left out for every caller who has a project hidden). Notifications written now know their
 * project from the start, so once none is left unknown each run is one indexed query that finds
 * nothing. An event the log no longer holds leaves its notifications unknown.
 */
import { IntervalLoop, type Logger } from '@reelbase/lib-platform';
import type { ProjectBackfillStore } from '../domain/ports.js';
import type { EventSource } from './log.follower.js';

/** Most event ids looked up per page of the log. */
const PAGE = 500;

export interface ProjectBackfillOptions {
  store: ProjectBackfillStore;
  source: Pick<EventSource, 'after'>;
  logger: Logger;
  /** Pause between runs (a run goes on while there is work; a failed one is retried after it). */
  intervalMs?: number;
}

export class ProjectBackfill {
  private readonly loop: IntervalLoop;
  /** Event ids at or below it were looked up by this process (those still unknown are not in the log). */
  private after = 0;

  constructor(private readonly opts: ProjectBackfillOptions) {
    this.loop = new IntervalLoop(
      opts.intervalMs ?? 60_000,
      (signal) => this.run(signal),
      (err) => opts.logger.warn({ err }, 'looking up the project of older notifications failed; trying again later'),
      { immediate: true },
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Looks up every unknown project it can; returns how many notifications it gave one. */
  async run(signal?: AbortSignal): Promise<number> {
    let updated = 0;
    while (!signal?.aborted) {
      const ids = await this.opts.store.unknownProjectEvents(this.after, PAGE);
      if (ids.length === 0) break;
      const first = ids[0]!;
      const span = ids.at(-1)! - first + 1;
      const page = await this.opts.source.after(first - 1, Math.min(PAGE, span));
      const projectOf = new Map(page.items.map((e) => [e.id, e.project_id]));
      const found = ids.flatMap((id) => (projectOf.has(id) ? [{ eventId: id, projectId: projectOf.get(id) ?? null }] : []));
      updated += await this.opts.store.setNotificationProjects(found);
      // The ids past the page's end are asked for again from there; an empty page: not in the log.
      this.after = page.items.at(-1)?.id ?? ids.at(-1)!;
    }
    if (updated > 0) this.opts.logger.info({ updated }, 'older notifications now know their project');
    return updated;
  }
}
