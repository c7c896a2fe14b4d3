/**
 * The gateway's in-process bus (lib-platform's bus.ts): live log rows and auth revocations arrive
 * here from NATS (or a fake in tests); the auth cache, the project access map and the WebSocket
 * hub subscribe.
 */
import { InProcessBus, type ContractEvent, type Logger } from '@reelbase/lib-platform';
import type { AuthChanges, ProjectChanges, Revocation } from '../domain/ports.js';
import { PROJECT } from '../domain/project.access.js';

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

/** The Project changes the bus carries (the domain's ProjectChanges port): each Project log row. */
export function projectChangesOf(bus: GatewayBus): ProjectChanges {
  return {
    subscribe(listener) {
      return bus.subscribe('event', (item) => {
        const row = item.row;
        if (row.entity_type === PROJECT) listener({ projectId: row.entity_id, action: row.action, changes: row.changes });
      });
    },
  };
}
