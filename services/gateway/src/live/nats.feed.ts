/**
 * Core NATS → gateway bus: appended log rows (`live.events.<EntityType>`) and auth revocations
 * (`auth.revocations`: an API key, a user, or every login token after an emergency signing-key
 * rotation). Malformed messages are logged and skipped.
 *
 * Rows of every type are received only while a WebSocket client needs them (docs/architecture.md,
 * "The write path and its events"): with no socket open, the gateway takes the `User` rows its
 * auth cache follows and the `Project` rows its project access map follows, and nothing else, so
 * a write costs the gateway no message of its own after it answered. A socket's cursor asks with {@link LiveInterest.follow} before it fixes where it
 * starts; the last socket's close lets the subscription go after `lingerMs`.
 */
import type { Subscription } from '@nats-io/nats-core';
import { encodeContractEvent, parseContractEvent, type ContractEvent, type Logger, type NatsConnection, type NatsNames } from '@reelbase/lib-platform';
import type { GatewayBus, LiveItem, Revocation } from './gateway.bus.js';

/** What the WebSocket hub tells the feed. */
export interface LiveInterest {
  /** Resolves once every appended row reaches the bus (never rejects: with NATS down none does). */
  follow(): Promise<void>;
  /** No socket needs every row any more. */
  idle(): void;
}

export interface LiveFeed extends LiveInterest {
  stop(): void;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * A live row whose JSON text is made the first time a socket asks for it (once, then shared): with
 * no socket open, or none that takes the row, the gateway does not serialise every write's event.
 */
function liveItem(row: ContractEvent): LiveItem {
  let text: string | undefined;
  return {
    row,
    get text() {
      return (text ??= encodeContractEvent(row));
    },
  };
}

interface AllRows {
  sub: Subscription;
  /** Settles when the server has the subscription. */
  ready: Promise<void>;
  active: boolean;
}

/** The types whose rows reach the bus whether or not a socket is open: who may log in, who may read a project. */
const ALWAYS_FOLLOWED = ['User', 'Project'] as const;

/** How long every row is still received after the last socket closed (a reconnect finds it on). */
const LINGER_MS = 30_000;

/** Subscribes to the auth subjects at once, to every row while {@link LiveInterest.follow} asks, and emits on `bus`. */
export function startNatsFeed(nc: NatsConnection, names: NatsNames, bus: GatewayBus, logger: Logger, opts: { lingerMs?: number } = {}): LiveFeed {
  const emit = (err: Error | null, data: Uint8Array) => {
    if (err) return logger.warn({ err }, 'live events subscription error');
    const parsed = parseContractEvent(data);
    if (!parsed.ok) return logger.warn({ reason: parsed.reason }, 'skipped a malformed live event');
    bus.emit('event', liveItem(parsed.event));
  };
  /** Every row, while a socket needs them; `active` once the server has the subscription. */
  let all: AllRows | undefined;
  let linger: NodeJS.Timeout | undefined;
  // Users and Projects, always (the auth cache, the project access map). While `all` is active it
  // brings them, so these stay quiet; around a switch both may emit a row, which the bus's
  // subscribers take twice without harm.
  const always = ALWAYS_FOLLOWED.map((type) =>
    nc.subscribe(names.liveEvent(type), { callback: (err, msg) => (all?.active ? undefined : emit(err, msg.data)) }),
  );
  const revocations = nc.subscribe(names.authRevocations, {
    callback: (err, msg) => {
      if (err) return logger.warn({ err }, 'revocations subscription error');
      try {
        const o = msg.json<Record<string, unknown>>();
        // `{"signing_keys": "rotated"}` needs nothing here (older keys retire after their tokens expired).
        if (o.signing_keys === 'rotated') return;
        const r: Revocation = { api_key_id: str(o.api_key_id), user_id: str(o.user_id), all_tokens: o.signing_keys === 'retired' };
        bus.emit('revocation', r);
      } catch (e) {
        logger.warn({ err: e }, 'skipped a malformed revocation');
      }
    },
  });
  const drop = () => {
    if (!all) return;
    all.active = false;
    all.sub.unsubscribe();
    all = undefined;
  };
  return {
    follow() {
      clearTimeout(linger);
      linger = undefined;
      if (!all) {
        const sub = nc.subscribe(names.liveEvents, { callback: (err, msg) => emit(err, msg.data) });
        const entry: AllRows = { sub, active: false, ready: Promise.resolve() };
        // The flush's answer comes after the server took the subscription: from then on every row reaches it.
        entry.ready = nc.flush().then(
          () => {
            entry.active = all === entry;
          },
          (err: unknown) => logger.warn({ err }, 'live events subscription not confirmed'),
        );
        all = entry;
      }
      return all.ready;
    },
    idle() {
      clearTimeout(linger);
      linger = setTimeout(drop, opts.lingerMs ?? LINGER_MS);
      linger.unref();
    },
    stop() {
      clearTimeout(linger);
      drop();
      for (const sub of always) sub.unsubscribe();
      revocations.unsubscribe();
    },
  };
}
