/**
 * The one call that queues a webhook with the notifier (`EnqueueActionDelivery`), shared by the
 * webhook actions and the scheduler's webhook targets: made as the schema service for the caller
 * (`Principal.via: schema`); the notifier answers at once and delivers it like a webhook
 * (docs/notifier.md, "Action deliveries").
 */
import { viaService, type CallContext, type PromiseClient } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';

/** The name the schema service calls the notifier under. */
export const SCHEMA_VIA = 'schema';

/** One delivery to queue: its id (a repeated call queues it once), `X-Action-Id`, target and body. */
export interface QueuedDelivery {
  deliveryId: string;
  actionId: string;
  url: string;
  secret: string | null;
  body: string;
}

/** Queues `d`; the delivery's id as the notifier answers it. */
export async function enqueueDelivery(notifier: PromiseClient<notifierv1.NotifierServiceClient>, d: QueuedDelivery, ctx: CallContext): Promise<string> {
  const res = await notifier.enqueueActionDelivery(
    { deliveryId: d.deliveryId, actionId: d.actionId, url: d.url, ...(d.secret !== null ? { secret: d.secret } : {}), bodyJson: d.body },
    viaService(ctx, SCHEMA_VIA),
  );
  return res.deliveryId;
}
