/**
 * Reads the EVENTS stream of a test prefix by sequence, so tests can count and inspect
 * exactly what the relay published.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { natsNames, parseStreamMessage, type StreamEvent } from '@reelbase/lib-platform';

export interface PublishedEvent {
  seq: number;
  subject: string;
  msgId: string | undefined;
  /** The payload as the events service reads it (a message it would refuse fails the test). */
  payload: StreamEvent;
}

export class StreamReader {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
  ) {}

  static async open(prefix: string, url = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222'): Promise<StreamReader> {
    const nc = await connect({ servers: url, timeout: 3000 });
    return new StreamReader(nc, await jetstreamManager(nc), natsNames(prefix).eventsStream);
  }

  /** Every message in the stream, in order (none when the stream does not exist yet). */
  async all(): Promise<PublishedEvent[]> {
    let first: number;
    let last: number;
    try {
      const info = await this.jsm.streams.info(this.stream);
      first = info.state.first_seq;
      last = info.state.last_seq;
    } catch {
      return [];
    }
    const out: PublishedEvent[] = [];
    for (let seq = first; seq <= last && last > 0; seq++) {
      const m = await this.jsm.streams.getMessage(this.stream, { seq });
      if (!m) continue;
      const parsed = parseStreamMessage(m.data);
      if (!parsed.ok) throw new Error(`stream message ${m.seq} would be refused by the events service: ${parsed.reason}`);
      // A batch's events share one message (and its sequence).
      for (const event of parsed.events) out.push({ seq: m.seq, subject: m.subject, msgId: m.header?.get('Nats-Msg-Id'), payload: event });
    }
    return out;
  }

  /** The messages about `entityId`. */
  async about(entityId: string): Promise<PublishedEvent[]> {
    return (await this.all()).filter((e) => e.payload.entity_id === entityId);
  }

  /**
   * Waits until `count` messages about `entityId` are there, then a little longer to make
   * sure no further one arrives; returns them.
   */
  async exactly(entityId: string, count: number, timeoutMs = 10_000, settleMs = 400): Promise<PublishedEvent[]> {
    const until = Date.now() + timeoutMs;
    let got = await this.about(entityId);
    while (got.length < count && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      got = await this.about(entityId);
    }
    await new Promise((r) => setTimeout(r, settleMs));
    return this.about(entityId);
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
