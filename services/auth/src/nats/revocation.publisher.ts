/**
 * Publishes revocations on core NATS (`auth.revocations`) so gateways drop cached principals
 * at once instead of waiting for their cache to expire. A lost message only delays the
 * effect until the cache expires, so publishing never fails the revocation itself.
 */
import { natsNames, type Logger, type NatsConnection } from '@reelbase/lib-platform';
import type { RevocationNotifier } from '../domain/api-key.service.js';

const FLUSH_TIMEOUT_MS = 1000;

export class NatsRevocationPublisher implements RevocationNotifier {
  private readonly subject: string;

  constructor(
    private readonly nc: NatsConnection,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.subject = natsNames(prefix).authRevocations;
  }

  async apiKeyRevoked(event: { api_key_id: string; user_id: string }): Promise<void> {
    try {
      this.nc.publish(this.subject, JSON.stringify(event));
      // Wait (briefly) for the server to have it, so the revocation is out when we answer.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.nc.flush(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('NATS flush timed out')), FLUSH_TIMEOUT_MS);
        }),
      ]).finally(() => clearTimeout(timer));
    } catch (err) {
      this.logger.warn({ err, ...event }, 'could not announce API key revocation; gateway caches expire on their own');
    }
  }
}
