/**
 * The in-process event bus (docs/architecture.md, "Platform library"): subscribe, emit, unsubscribe. Callbacks run
 * synchronously inside `emit`, in subscription order; a subscriber that throws is reported
 * and never prevents the others from running.
 */
export type BusHandler<T> = (payload: T) => void;

/** Called with every error a subscriber throws. */
export type BusErrorReporter = (err: unknown, topic: string) => void;

export class InProcessBus<Topics extends Record<string, unknown> = Record<string, unknown>> {
  private readonly handlers = new Map<keyof Topics, Set<BusHandler<never>>>();

  constructor(private readonly onError: BusErrorReporter = () => {}) {}

  /** Registers `handler` for `topic`; returns a function that unsubscribes it. */
  subscribe<K extends keyof Topics>(topic: K, handler: BusHandler<Topics[K]>): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      set = new Set();
      this.handlers.set(topic, set);
    }
    set.add(handler as BusHandler<never>);
    return () => this.unsubscribe(topic, handler);
  }

  /** Removes `handler`; returns false when it was not subscribed. */
  unsubscribe<K extends keyof Topics>(topic: K, handler: BusHandler<Topics[K]>): boolean {
    const set = this.handlers.get(topic);
    if (!set) return false;
    const removed = set.delete(handler as BusHandler<never>);
    if (set.size === 0) this.handlers.delete(topic);
    return removed;
  }

  /** Calls every subscriber of `topic` synchronously; returns how many ran without throwing. */
  emit<K extends keyof Topics>(topic: K, payload: Topics[K]): number {
    const set = this.handlers.get(topic);
    if (!set) return 0;
    let ok = 0;
    // Copy: a handler may unsubscribe itself (or others) while we iterate.
    for (const handler of [...set]) {
      try {
        (handler as BusHandler<Topics[K]>)(payload);
        ok++;
      } catch (err) {
        try {
          this.onError(err, String(topic));
        } catch {
          // A broken reporter must not break emit either.
        }
      }
    }
    return ok;
  }

  /** Number of subscribers of `topic`. */
  count<K extends keyof Topics>(topic: K): number {
    return this.handlers.get(topic)?.size ?? 0;
  }
}
