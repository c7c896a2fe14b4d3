/**
 * What the actions need from outside (docs/architecture.md, "Actions"), re-exported by
 * domain/ports.ts: their store (the studio's custom actions, launch requests and the outbox,
 * store/actions.repository.ts), records (records/actions.records.ts) and the notifier, which
 * delivers webhook actions (notifier/action.deliveries.ts).
 */
import type { CallContext, StreamEvent } from '@reelbase/lib-platform';
import type { ActionRecord, CustomAction, LaunchPayload } from './actions.rules.js';

export type { ActionRecord };

/** A launch request to store: found again by the hash of its token, for its user only. */
export interface NewLaunch {
  id: string;
  tokenHash: string;
  userId: string;
  payload: LaunchPayload;
  /** Milliseconds it stays valid, by the database clock. */
  ttlMs: number;
}

export interface ActionStore {
  /** The studio's custom actions in their order, secrets opened. */
  customActions(): Promise<CustomAction[]>;
  /**
   * Replaces the list in one transaction with its event (outbox); an action given with
   * `secret: undefined` keeps the secret its id had. Returns the list as stored.
   */
  replaceCustomActions(
    actions: Array<Omit<CustomAction, 'secret'> & { secret: string | null | undefined }>,
    event: (stored: CustomAction[]) => StreamEvent,
  ): Promise<CustomAction[]>;
  /** Stores a launch request and its event in one transaction; when it expires (ISO 8601). */
  createLaunch(launch: NewLaunch, event: StreamEvent): Promise<string>;
  /**
   * Takes the unexpired launch request of `tokenHash` made by `userId`, once: deleted as it is
   * read. Null when there is none (another user's, taken, expired, never made); another user's
   * attempt leaves it as it was.
   */
  takeLaunch(tokenHash: string, userId: string): Promise<LaunchPayload | null>;
  /** Writes one event to the outbox. */
  recordEvent(event: StreamEvent): Promise<void>;
}

export interface ActionRecordsPort {
  /** The live record of `entityType` with `id`, or null. */
  find(entityType: string, id: string, ctx: CallContext): Promise<ActionRecord | null>;
  /** The live records of `entityType` among `ids` (any order). */
  many(entityType: string, ids: string[], ctx: CallContext): Promise<ActionRecord[]>;
}

/** A webhook action to deliver (the notifier sends it like a webhook delivery). */
export interface ActionDeliveryRequest {
  deliveryId: string;
  actionId: string;
  url: string;
  secret: string | null;
  body: string;
}

export interface ActionDeliveriesPort {
  /** Queues the delivery and returns at once; its id. */
  enqueue(d: ActionDeliveryRequest, ctx: CallContext): Promise<string>;
}
