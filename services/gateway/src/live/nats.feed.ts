/**
 * Core NATS → gateway bus: appended log rows (`live.events`) and auth revocations
 * (`auth.revocations`: an API key, a user, or every login token after an emergency signing-key
 * rotation). Malformed messages are logged and skipped.
 */
import { encodeContractEvent, parseContractEvent, type ContractEvent, type Logger, type NatsConnection, type NatsNames } from '@reelbase/lib-platform';
import type { GatewayBus, LiveItem, Revocation } from './gateway.bus.js';

export interface LiveFeed {
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

/** Subscribes to both subjects and emits on `bus`. */
export function startNatsFeed(nc: NatsConnection, names: NatsNames, bus: GatewayBus, logger: Logger): LiveFeed {
  const live = nc.subscribe(names.liveEvents, {
    callback: (err, msg) => {
      if (err) return logger.warn({ err }, 'live events subscription error');
      const parsed = parseContractEvent(msg.data);
      if (!parsed.ok) return logger.warn({ reason: parsed.reason }, 'skipped a malformed live event');
      bus.emit('event', liveItem(parsed.event));
    },
  });
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
  return {
    stop() {
      live.unsubscribe();
      revocations.unsubscribe();
    },
  };
}
