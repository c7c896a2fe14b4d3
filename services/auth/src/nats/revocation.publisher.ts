/**
 * Publishes revocations on core NATS (`auth.revocations`) so gateways drop cached principals
 * (and re-check their sockets) at once instead of waiting for their cache to expire, and so the
 * other auth replicas reload their signing keys after a rotation. A lost message only delays
 * the effect until caches expire, the periodic key reload, or a socket's periodic re-check, so
 * publishing never fails the revocation itself. Messages:
 *
 *   {"api_key_id", "user_id"}      one API key revoked
 *   {"user_id"}                    the user's tokens and keys must be checked again
 *   {"signing_keys": "rotated"}    a new signing key; older ones retire later
 *   {"signing_keys": "retired"}    a new signing key; every older one retired at once
 */
import { announce, natsNames, type Logger, type NatsConnection } from '@reelbase/lib-platform';
import type { SigningKeyRing } from '../domain/signing-key.ring.js';
import type { RevocationNotifier, RotationNotifier } from '../domain/ports.js';

export class NatsRevocationPublisher implements RevocationNotifier, RotationNotifier {
  private readonly subject: string;

  constructor(
    private readonly nc: NatsConnection,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.subject = natsNames(prefix).authRevocations;
  }

  apiKeyRevoked(event: { api_key_id: string; user_id: string }): Promise<void> {
    return this.publish(event, 'could not announce API key revocation; gateway caches expire on their own');
  }

  userRevoked(event: { user_id: string }): Promise<void> {
    return this.publish(event, "could not announce the revocation of a user's sessions; gateway caches expire on their own");
  }

  signingKeysRotated(retiredAtOnce: boolean): Promise<void> {
    return this.publish({ signing_keys: retiredAtOnce ? 'retired' : 'rotated' }, 'could not announce a signing key rotation; replicas reload on their own');
  }

  /** Waits (briefly) for the server to have it, so the revocation is out when we answer. */
  private async publish(event: Record<string, string>, failure: string): Promise<void> {
    await announce(this.nc, this.subject, event, { logger: this.logger, failure });
  }
}

/** Reloads `ring` whenever any replica announces a rotation; returns the unsubscribe function. */
export function followRotations(nc: NatsConnection, prefix: string, ring: SigningKeyRing, logger: Logger): () => void {
  const sub = nc.subscribe(natsNames(prefix).authRevocations, {
    callback: (err, msg) => {
      if (err) return logger.warn({ err }, 'revocations subscription error');
      let o: unknown;
      try {
        o = msg.json();
      } catch {
        return;
      }
      if (!o || typeof o !== 'object' || !('signing_keys' in o)) return;
      ring.refresh().catch((e: unknown) => logger.warn({ err: e }, 'could not reload signing keys after a rotation'));
    },
  });
  return () => sub.unsubscribe();
}
