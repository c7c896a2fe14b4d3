/**
 * The {@link ActionDeliveriesPort} over the notifier's gRPC API: a webhook action is queued
 * with `EnqueueActionDelivery` as a call the schema service makes for the user
 * (`Principal.via: schema`); the notifier answers at once and delivers it like a webhook.
 */
import { viaService, type CallContext, type PromiseClient } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import type { ActionDeliveriesPort, ActionDeliveryRequest } from '../domain/actions/actions.ports.js';

/** The name the schema service calls the notifier under. */
export const SCHEMA_VIA = 'schema';

export class NotifierActionDeliveries implements ActionDeliveriesPort {
  constructor(private readonly notifier: PromiseClient<notifierv1.NotifierServiceClient>) {}

  async enqueue(d: ActionDeliveryRequest, ctx: CallContext): Promise<string> {
    const res = await this.notifier.enqueueActionDelivery(
      { deliveryId: d.deliveryId, actionId: d.actionId, url: d.url, ...(d.secret !== null ? { secret: d.secret } : {}), bodyJson: d.body },
      viaService(ctx, SCHEMA_VIA),
    );
    return res.deliveryId;
  }
}
