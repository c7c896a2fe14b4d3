/**
 * One subscriber's position in the event log. Live rows arrive in any order and possibly
 * twice; the client must see every id exactly once, in order. A row with id = cursor + 1 is
 * sent at once; a later id means rows were missed, so the log is read (after = cursor) until
 * the gap is closed, holding live rows meanwhile; an id ≤ cursor is dropped.
 */
import type { LiveItem } from '../live/gateway.bus.js';

/** One read of the log: up to `limit` rows after an id, oldest first. */
export interface LogPage {
  items: LiveItem[];
  /**
   * The page ended at the log's byte budget before `limit` rows: more rows follow at once.
   * Large events make pages short, so a short page alone does not mean the end of the log.
   */
  truncated: boolean;
}

/** Reads of the persistent log (events ListEvents with `after`). */
export interface EventLog {
  after(afterId: number, limit: number): Promise<LogPage>;
}

export interface CursorOptions {
  /** The last id the client has (or needs not) see. */
  start: number;
  log: EventLog;
  send: (item: LiveItem) => void;
  /** The stream cannot go on (queue overflow, log down): close with `code`. */
  fail: (code: number, reason: string) => void;
  /** Resolves when the client can take more (back-pressure during replays). */
  writable?: () => Promise<void>;
  /** Live rows held while catching up before the client counts as too slow. */
  maxPending?: number;
  pageSize?: number;
  retryMs?: number;
  /** Consecutive failed log reads before giving up. */
  maxFailures?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class EventCursor {
  private cursor: number;
  /** Held live rows, ascending by id, no duplicates, all > cursor. */
  private pending: LiveItem[] = [];
  private catching = false;
  private closed = false;
  private readonly maxPending: number;
  private readonly pageSize: number;
  private readonly retryMs: number;
  private readonly maxFailures: number;

  constructor(private readonly opts: CursorOptions) {
    this.cursor = opts.start;
    this.maxPending = opts.maxPending ?? 10_000;
    this.pageSize = opts.pageSize ?? 1000;
    this.retryMs = opts.retryMs ?? 250;
    this.maxFailures = opts.maxFailures ?? 20;
  }

  /** The last id sent. */
  get position(): number {
    return this.cursor;
  }

  /** Replays the log after the start position (rows committed before the subscription). */
  start(): Promise<void> {
    return this.catching ? Promise.resolve() : this.catchUp();
  }

  /** A live row. */
  offer(item: LiveItem): void {
    if (this.closed) return;
    const id = item.row.id;
    if (id <= this.cursor) return;
    if (!this.catching && id === this.cursor + 1) {
      this.deliver(item);
      return;
    }
    this.hold(item);
    if (!this.catching && !this.closed) void this.catchUp();
  }

  close(): void {
    this.closed = true;
    this.pending = [];
  }

  private deliver(item: LiveItem): void {
    this.cursor = item.row.id;
    this.opts.send(item);
  }

  private hold(item: LiveItem): void {
    const id = item.row.id;
    const p = this.pending;
    if (p.length === 0 || p[p.length - 1]!.row.id < id) {
      p.push(item);
    } else {
      let i = p.length - 1;
      while (i >= 0 && p[i]!.row.id > id) i--;
      if (i >= 0 && p[i]!.row.id === id) return;
      p.splice(i + 1, 0, item);
    }
    if (p.length > this.maxPending) this.stop(1013, 'client too slow');
  }

  private stop(code: number, reason: string): void {
    if (this.closed) return;
    this.close();
    this.opts.fail(code, reason);
  }

  /** Sends held rows that are now next in line; drops those already sent. */
  private flushPending(): void {
    let i = 0;
    const p = this.pending;
    while (i < p.length && !this.closed) {
      const id = p[i]!.row.id;
      if (id <= this.cursor) i++;
      else if (id === this.cursor + 1) this.deliver(p[i++]!);
      else break;
    }
    if (i > 0) p.splice(0, i);
  }

  private async catchUp(): Promise<void> {
    this.catching = true;
    let failures = 0;
    let stalls = 0;
    try {
      while (!this.closed) {
        let page: LogPage;
        try {
          page = await this.opts.log.after(this.cursor, this.pageSize);
          failures = 0;
        } catch {
          if (++failures >= this.maxFailures) return this.stop(1013, 'event log unavailable');
          await sleep(this.retryMs);
          continue;
        }
        if (this.closed) return;
        let progressed = false;
        for (const item of page.items) {
          if (item.row.id <= this.cursor) continue;
          // The log is gapless; a hole here means a concurrent append is not visible yet.
          if (item.row.id !== this.cursor + 1) break;
          this.deliver(item);
          progressed = true;
          if (this.closed) return;
        }
        if (this.opts.writable) {
          try {
            await this.opts.writable();
          } catch {
            return this.stop(1013, 'client too slow');
          }
        }
        if (progressed && (page.truncated || page.items.length >= this.pageSize)) continue;
        this.flushPending();
        if (this.pending.length === 0) return;
        // A held row is ahead of what the log shows yet: wait for it to appear.
        stalls = progressed ? 0 : stalls + 1;
        if (stalls > 0) await sleep(Math.min(this.retryMs * stalls, 2000));
      }
    } finally {
      this.catching = false;
    }
  }
}
