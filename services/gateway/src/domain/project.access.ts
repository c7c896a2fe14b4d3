/**
 * Who may read which project, as the gateway holds it for what it serves beside records' own
 * reads (docs/api-notes.md, "Restricted projects"): `GET /events`, the WebSocket, the sync
 * changes feed, notifications, and routes naming a project that another service answers as
 * itself. A reader of a project is anyone when the project is not restricted; else an Admin or a
 * User in its `members`. Admins, services and share-link guests read every project (a guest's
 * reach is its playlist); an API key reads as its user.
 *
 * The map (restricted project → member ids) is read from records (`ListRestrictedProjects`) at
 * start, on every Project event that reaches the gateway, after every Project write the gateway
 * relays (before it answers), and every {@link REFRESH_MS} besides, should a message be lost.
 * Reloads are coalesced: at most one runs, and one more follows it when asked for meanwhile. A
 * Project event is also applied to the map at once, before the event is handed to any socket,
 * so its own event never reaches a socket that may no longer read it.
 *
 * Until a first read succeeds, and whenever a reload asked for by a change fails, the map is
 * unknown: callers that do not read everything get 503 (`hiddenFor` and `readable` throw
 * `unavailable`) rather than anything the map might have hidden; every {@link RETRY_MS} it is
 * read again until it is known.
 */
import { AppError, IntervalLoop, membershipOf, type BackgroundLoop, type Principal } from '@reelbase/lib-platform';
import type { ProjectChange, ProjectChanges, RestrictedProjectEntry, RestrictedProjectsSource } from './ports.js';

/** The type whose records are projects (its events change the map). */
export const PROJECT = 'Project';

/** How often the map is read again when nothing asked for it (a lost Project event is caught by then). */
export const REFRESH_MS = 30_000;
/** How often an unknown map is read again. */
export const RETRY_MS = 1_000;

const NONE: ReadonlySet<string> = new Set();

/**
 * True when `principal` reads every project: an Admin, a service, a share-link guest (or a call
 * without a principal, which no filtered route makes).
 */
export function readsEveryProject(principal: Principal | undefined): boolean {
  return membershipOf(principal) === null;
}

/** The user ids of a `members` value as records stores it (`[{"type": "User", "id"}]`). */
function memberIdsOf(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((m: unknown) => {
    const id = typeof m === 'object' && m !== null ? (m as { id?: unknown }).id : undefined;
    return typeof id === 'string' ? [id] : [];
  });
}

type AccessMap = Map<string, ReadonlySet<string>>;

function mapOf(entries: readonly RestrictedProjectEntry[]): AccessMap {
  return new Map(entries.map((e) => [e.id.toLowerCase(), new Set(e.memberIds)]));
}

function sameMap(a: AccessMap | null, b: AccessMap): boolean {
  if (!a || a.size !== b.size) return false;
  for (const [id, members] of b) {
    const had = a.get(id);
    if (!had || had.size !== members.size) return false;
    for (const m of members) if (!had.has(m)) return false;
  }
  return true;
}

/** The 503 of a caller whose projects cannot be told while the map is unknown. */
function unknownAccess(): AppError {
  return AppError.unavailable('who may read restricted projects is not known yet: records could not be asked');
}

export class ProjectAccess implements BackgroundLoop {
  /** Restricted project id → its members; null while unknown. */
  private restricted: AccessMap | null = null;
  /** Project events applied so far: a read that began before one may predate it. */
  private applied = 0;
  /** Reads asked for, and how many of them the last one finished covered. */
  private requested = 0;
  private covered = 0;
  /** The last read asked for because a Project changed, and the reads the last successful one covered. */
  private lastChange = 0;
  private readUpTo = 0;
  private running = false;
  private waiting: Array<{ upTo: number; done: () => void }> = [];
  private readonly listeners = new Set<() => void>();
  private readonly loop: IntervalLoop;

  constructor(
    private readonly source: RestrictedProjectsSource,
    private readonly onError: (err: unknown) => void = () => {},
    timing: { refreshMs?: number; retryMs?: number } = {},
  ) {
    const refreshMs = timing.refreshMs ?? REFRESH_MS;
    const retryMs = timing.retryMs ?? RETRY_MS;
    this.loop = new IntervalLoop(
      () => (this.known ? refreshMs : retryMs),
      () => this.refresh(),
      onError,
    );
  }

  /** Whether the map has been read (and no change since went unread). */
  get known(): boolean {
    return this.restricted !== null;
  }

  /** Starts the periodic reads (the first read is {@link refresh}, awaited by the caller). */
  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * The projects `principal` may not read: empty for one that reads every project; throws
   * `unavailable` while the map is unknown.
   */
  hiddenFor(principal: Principal | undefined): ReadonlySet<string> {
    if (readsEveryProject(principal)) return NONE;
    const map = this.restricted;
    if (!map) throw unknownAccess();
    const hidden = new Set<string>();
    for (const [id, members] of map) if (!members.has(principal!.userId)) hidden.add(id);
    return hidden;
  }

  /** Whether `principal` may read `projectId` (null: studio-wide, always); throws `unavailable` while unknown. */
  readable(principal: Principal | undefined, projectId: string | null | undefined): boolean {
    if (!projectId || readsEveryProject(principal)) return true;
    const map = this.restricted;
    if (!map) throw unknownAccess();
    const members = map.get(projectId.toLowerCase());
    return !members || members.has(principal!.userId);
  }

  /** Throws 404 `not_found` for a project `principal` may not read, as for one that does not exist. */
  assertReadable(principal: Principal | undefined, projectId: string | null | undefined): void {
    if (!this.readable(principal, projectId)) throw AppError.notFound(`project ${projectId} does not exist`);
  }

  /** Calls `listener` after every change of the map (a read that changed it, a Project event, unknown); returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies every Project event of `changes` and reads the map again; returns the unsubscribe function. */
  subscribeTo(changes: ProjectChanges): () => void {
    return changes.subscribe((change) => {
      void this.projectChanged(change);
    });
  }

  /**
   * Reads the map again; resolves once a read that began after this call has finished (failed
   * or not). `changed`: a Project was written, so a failed read leaves the map unknown rather
   * than as it was.
   */
  refresh(changed = false): Promise<void> {
    const upTo = ++this.requested;
    if (changed) this.lastChange = upTo;
    const done = new Promise<void>((resolve) => this.waiting.push({ upTo, done: resolve }));
    if (!this.running) void this.drain();
    return done;
  }

  /**
   * A Project event: what it says of `restricted` and `members` is applied at once (a project
   * that becomes restricted without naming its members is read as having none until the reload
   * that follows says otherwise), then the map is read again.
   */
  projectChanged(change: ProjectChange): Promise<void> {
    const map = this.restricted;
    if (map) {
      const id = change.projectId.toLowerCase();
      const c = change.changes;
      const had = map.get(id);
      let next: ReadonlySet<string> | undefined = had;
      if (Object.hasOwn(c, 'restricted')) next = c.restricted === true ? (had ?? NONE) : undefined;
      if (next !== undefined && Object.hasOwn(c, 'members')) next = new Set(memberIdsOf(c.members));
      if (next !== had) {
        const updated = new Map(map);
        if (next === undefined) updated.delete(id);
        else updated.set(id, next);
        this.set(updated);
      }
    }
    this.applied++;
    return this.refresh(true);
  }

  private set(map: AccessMap | null): void {
    this.restricted = map;
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Runs reads one at a time until every one asked for is covered. */
  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.covered < this.requested) {
        const upTo = this.requested;
        const appliedBefore = this.applied;
        try {
          const map = mapOf(await this.source());
          // An event applied while this read ran may be newer than what it read: the read its
          // event asked for (next round) decides.
          if (this.applied === appliedBefore) {
            this.readUpTo = upTo;
            if (!sameMap(this.restricted, map)) this.set(map);
          }
        } catch (err) {
          this.onError(err);
          // A change no read has seen: the map may show access that is gone.
          if (this.lastChange > this.readUpTo && this.restricted !== null) this.set(null);
        }
        this.covered = upTo;
        const ready = this.waiting.filter((w) => w.upTo <= upTo);
        this.waiting = this.waiting.filter((w) => w.upTo > upTo);
        for (const w of ready) w.done();
      }
    } finally {
      this.running = false;
    }
  }
}
