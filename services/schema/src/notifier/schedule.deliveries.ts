/**
 * The scheduler's {@link ScheduleDeliveriesPort} over the notifier's one delivery mechanism:
 * a `webhook` target's run is queued with `EnqueueActionDelivery` (the call webhook actions use),
 * as the schema service (`Principal.via: schema`), under the run's id (so a repeated call queues
 * it once) and `action_id` `schedule:<schedule id>` (its `X-Action-Id` header); the notifier
 * signs, sends and retries it like a webhook delivery.
 */
import { viaService, type CallContext, type PromiseClient } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import type { ScheduleDeliveriesPort, ScheduleDelivery } from '../domain/scheduler/scheduler.ports.js';
import { SCHEMA_VIA } from './action.deliveries.js';

export class NotifierScheduleDeliveries implements ScheduleDeliveriesPort {
  constructor(private readonly notifier: PromiseClient<notifierv1.NotifierServiceClient>) {}

  async enqueue(d: ScheduleDelivery, ctx: CallContext): Promise<string> {
    const res = await this.notifier.enqueueActionDelivery(
      {
        deliveryId: d.deliveryId,
        actionId: `schedule:${d.scheduleId}`,
        url: d.url,
        ...(d.secret !== null ? { secret: d.secret } : {}),
        bodyJson: d.body,
      },
      viaService(ctx, SCHEMA_VIA),
    );
    return res.deliveryId;
  }
}
