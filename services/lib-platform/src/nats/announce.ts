/**
 * Publish with a flush: a core NATS message that the caller wants out before it answers (a
 * revocation, a User change), but whose loss must never fail the work already committed.
 */
import type { Logger } from '../logger.js';
import type { NatsConnection } from './connection.js';

/** How long {@link announce} waits for the server to have the message by default. */
export const ANNOUNCE_FLUSH_MS = 1000;

export interface AnnounceOptions {
  logger: Logger;
  /** The warning logged (with the payload's fields) when the message may not have gone out. */
  failure: string;
  timeoutMs?: number;
}

/**
 * Publishes `payload` as JSON on `subject`, then waits (at most `timeoutMs`) until the server
 * has it. Never throws: a failure or a timeout is logged as a warning and resolves false.
 */
export async function announce(nc: NatsConnection, subject: string, payload: Record<string, unknown>, opts: AnnounceOptions): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    nc.publish(subject, JSON.stringify(payload));
    await Promise.race([
      nc.flush(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('NATS flush timed out')), opts.timeoutMs ?? ANNOUNCE_FLUSH_MS);
      }),
    ]);
    return true;
  } catch (err) {
    opts.logger.warn({ err, ...payload }, opts.failure);
    return false;
  } finally {
    clearTimeout(timer);
  }
}
