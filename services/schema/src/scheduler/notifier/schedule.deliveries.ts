/**
 * The scheduler's {@link ScheduleDeliveriesPort} over the notifier's one delivery mechanism:
 * a `webhook` target's run is queued with `EnqueueActionDelivery` (the call webhook actions use),
 * as the schema service (`Principal.via: schema`), under the run's id (so a repeated call queues
 * it once) and `action_id` `schedule:<schedule id>` (its `X-Action-Id` header); the notifier
 * signs, sends and retries it like a webhook delivery.
 */
import type { CallContext, PromiseClient } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import { enqueueDelivery } from '../../kernel/notifier/action.delivery.js';
import type { ScheduleDeliveriesPort, ScheduleDelivery } from '../domain/scheduler.ports.js';

export class NotifierScheduleDeliveries implements ScheduleDeliveriesPort {
  constructor(private readonly notifier: PromiseClient<notifierv1.NotifierServiceClient>) {}

  enqueue(d: ScheduleDelivery, ctx: CallContext): Promise<string> {
    return enqueueDelivery(this.notifier, { deliveryId: d.deliveryId, actionId: `schedule:${d.scheduleId}`, url: d.url, secret: d.secret, body: d.body }, ctx);
  }
}
