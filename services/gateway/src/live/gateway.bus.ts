/**
 * The gateway's in-process bus (lib-platform's bus.ts): live log rows and auth revocations arrive
 * here from NATS (or a fake in tests); the auth cache and the WebSocket hub subscribe.
 */
import { InProcessBus, type ContractEvent, type Logger } from '@reelbase/lib-platform';

/** One live row, with its JSON text serialised once for every socket. */
export interface LiveItem {
  row: ContractEvent;
  text: string;
}

/** A revoked API key and/or a user whose tokens must be re-checked; or every login token (signing keys retired). */
export interface Revocation {
  api_key_id?: string | null;
  user_id?: string | null;
  /** Every signing key but the newest was retired at once: every login token must be re-checked. */
  all_tokens?: boolean;
}

export type GatewayTopics = {
  event: LiveItem;
  revocation: Revocation;
};

export type GatewayBus = InProcessBus<GatewayTopics>;

/** A bus whose failing subscribers are logged, never propagated. */
export function createGatewayBus(logger: Logger): GatewayBus {
  return new InProcessBus<GatewayTopics>((err, topic) => logger.error({ err, topic }, 'bus subscriber failed'));
}
