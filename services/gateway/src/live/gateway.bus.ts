/**
 * The gateway's in-process bus (lib-platform's bus.ts): live log rows and auth revocations arrive
 * here from NATS (or a fake in tests); the auth cache and the WebSocket hub subscribe.
 */
import { InProcessBus, type ContractEvent, type Logger } from '@reelbase/lib-platform';
import type { AuthChanges, Revocation } from '../domain/ports.js';

/** One live row, with its JSON text serialised once for every socket. */
export interface LiveItem {
  row: ContractEvent;
  text: string;
}

export type { Revocation } from '../domain/ports.js';

export type GatewayTopics = {
  event: LiveItem;
  revocation: Revocation;
};

export type GatewayBus = InProcessBus<GatewayTopics>;

/** A bus whose failing subscribers are logged, never propagated. */
export function createGatewayBus(logger: Logger): GatewayBus {
  return new InProcessBus<GatewayTopics>((err, topic) => logger.error({ err, topic }, 'bus subscriber failed'));
}

/** The auth changes the bus carries (the domain's AuthChanges port): revocations, and log rows of Users. */
export function authChangesOf(bus: GatewayBus): AuthChanges {
  return {
    subscribe(listener) {
      const offRevocation = bus.subscribe('revocation', (r) => listener.revocation(r));
      const offEvent = bus.subscribe('event', (item) => {
        if (item.row.entity_type === 'User') listener.userChanged(item.row.entity_id);
      });
      return () => {
        offRevocation();
        offEvent();
      };
    },
  };
}
