/**
 * Every NATS stream, subject and durable consumer name lives here and only here. A prefix
 * (NATS_PREFIX) lets several stacks or test runs share one server without colliding.
 */

/** Entity-change events: `events.<EntityType>.<action>`, captured by the EVENTS stream. */
export interface NatsNames {
  readonly prefix: string;
  /** JetStream stream of committed writes (outbox relay → events, notifier). */
  readonly eventsStream: string;
  /** Subject filter of {@link eventsStream}. */
  readonly eventsSubjects: string;
  /** Durable consumer of the event-log writer. */
  readonly eventLogConsumer: string;
  /** Core NATS subjects (a wildcard) on which the events service announces appended log rows. */
  readonly liveEvents: string;
  /**
   * The subject of one appended row of `entityType`: `live.events.<EntityType>`, so that a
   * subscriber can take the rows of one type only (the gateway's auth cache: Users).
   */
  liveEvent(entityType: string): string;
  /** Core NATS subject on which auth announces revoked API keys and disabled users. */
  readonly authRevocations: string;
  /** JetStream work-queue stream of reviewable transcode jobs (media api → media workers). */
  readonly transcodeStream: string;
  /** The one subject of {@link transcodeStream}; a message is `{"job_id": "<uuid>"}`, Nats-Msg-Id = job id. */
  readonly transcodeSubject: string;
  /** Durable pull consumer every media worker shares (KEDA scales the workers on its backlog). */
  readonly transcodeConsumer: string;
  /** The subject of one entity change. */
  eventSubject(entityType: string, action: string): string;
  /** The subject of a batch's events, one message (stream-event.ts, encodeStreamBatch). */
  readonly eventBatchSubject: string;
}

const TOKEN = /^[A-Za-z0-9_.-]+$/;
const LIVE_TYPE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Names for a given prefix ('' in production). */
export function natsNames(prefix = ''): NatsNames {
  return {
    prefix,
    eventsStream: `${prefix}EVENTS`,
    eventsSubjects: `${prefix}events.>`,
    eventLogConsumer: `${prefix}event-log`,
    liveEvents: `${prefix}live.events.>`,
    liveEvent(entityType: string): string {
      // Dotted types (`Schema.Status`) are several tokens, which `>` matches; a type that could
      // not be a subject (none can: types are identifiers) still goes out, under `_`.
      return `${prefix}live.events.${LIVE_TYPE.test(entityType) ? entityType : '_'}`;
    },
    authRevocations: `${prefix}auth.revocations`,
    transcodeStream: `${prefix}TRANSCODE`,
    transcodeSubject: `${prefix}media.transcode`,
    transcodeConsumer: `${prefix}transcode-workers`,
    eventBatchSubject: `${prefix}events.batch`,
    eventSubject(entityType: string, action: string): string {
      if (!TOKEN.test(entityType) || !TOKEN.test(action)) {
        throw new Error(`invalid subject token in ${entityType}.${action}`);
      }
      return `${prefix}events.${entityType}.${action}`;
    },
  };
}
