/**
 * The {@link ActionDeliveriesPort} over the notifier's gRPC API: a webhook action is queued
 * with `EnqueueActionDelivery` as a call the schema service makes for the user
 * (`Principal.via: schema`); the notifier answers at once and delivers it like a webhook.
 */
import type { CallContext, PromiseClient } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import { enqueueDelivery } from '../../kernel/notifier/action.delivery.js';
import type { ActionDeliveriesPort, ActionDeliveryRequest } from '../domain/actions.ports.js';

export class NotifierActionDeliveries implements ActionDeliveriesPort {
  constructor(private readonly notifier: PromiseClient<notifierv1.NotifierServiceClient>) {}

  enqueue(d: ActionDeliveryRequest, ctx: CallContext): Promise<string> {
    return enqueueDelivery(this.notifier, d, ctx);
  }
}
