/**
 * Starts the notifier: the log follower (notifications and queued deliveries), the delivery
 * engine, the gRPC API and the ops server. Used by main.ts and by tests in-process.
 */
import { lookup } from 'node:dns/promises';
import type { Subscription } from '@nats-io/nats-core';
import { eventsv1, notifierv1 } from '@reelbase/proto';
import {
  connectNats,
  contractEventFromProto,
  createGrpcClient,
  createLogger,
  GrpcServer,
  Metrics,
  natsNames,
  openOrm,
  pingDb,
  SecretCipher,
  pingNats,
  Readiness,
  startOpsServer,
  systemContext,
  withResources,
  type Logger,
  type RunningService,
  ormPoolSample,
} from '@reelbase/lib-platform';
import type { NotifierConfig } from './config.js';
import { DeliveryEngine, USER_AGENT } from './delivery/delivery.engine.js';
import { HttpSender } from './delivery/http.sender.js';
import { DeliveryRetention } from './delivery/retention.js';
import type { HostResolver } from './domain/target.policy.js';
import { NotifierApi } from './domain/notifier.api.js';
import { NOTIFIER_SERVICE_NAME, notifierHandlers } from './grpc/notifier.handler.js';
import { LogFollower, type EventSource } from './ingest/log.follower.js';
import { ProjectBackfill } from './ingest/project.backfill.js';
import { createNotifierMetrics } from './metrics.js';
import { ApiRepository } from './store/api.repository.js';
import { ActionDeliveryRepository } from './store/action-delivery.repository.js';
import { DeliveryRepository } from './store/delivery.repository.js';
import { WebhookSecrets } from './store/webhook.secrets.js';
import { IngestRepository } from './store/ingest.repository.js';
import { RetentionRepository } from './store/retention.repository.js';
import { NOTIFIER_MIGRATIONS } from './store/migrations.js';

/** A running notifier. */
export interface RunningNotifier extends RunningService {
  grpcPort: number;
  follower: LogFollower;
  engine: DeliveryEngine;
}

const DNS_TIMEOUT_MS = 3000;

/** Every address of `host` (the system resolver, bounded in time). */
export const systemResolver: HostResolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  try {
    const found = await Promise.race([
      lookup(host, { all: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('DNS timeout')), DNS_TIMEOUT_MS);
      }),
    ]);
    return found.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
};

/** Starts every part of the service; rejects (after cleaning up) if a dependency is missing. */
export function startNotifier(config: NotifierConfig, logger: Logger = createLogger('notifier', config.LOG_LEVEL)): Promise<RunningNotifier> {
  const metrics = new Metrics('notifier');
  const nm = createNotifierMetrics(metrics);
  const names = natsNames(config.NATS_PREFIX);
  return withResources(
    logger,
    async (resources) => {
      const orm = await openOrm({
        clientUrl: config.DATABASE_URL,
        schema: 'notifier',
        entities: [],
        migrations: NOTIFIER_MIGRATIONS,
        logger,
        poolMax: Math.min(40, config.WEBHOOK_CONCURRENCY + 6),
      });
      resources.defer('postgres', () => orm.close());
      const secrets = new WebhookSecrets(new SecretCipher(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS ?? []));
      // Secrets stored in clear before they were sealed, or sealed with an earlier SECRETS_KEY.
      const sealed = await secrets.sealStored(orm.em.getConnection().getKnex());
      if (sealed > 0) logger.info({ sealed }, 'webhook secrets encrypted with the current SECRETS_KEY');
      const nc = await connectNats(config.NATS_URL, 'notifier', logger);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));

      const events = createGrpcClient(eventsv1.EventsServiceClient, eventsv1.EventsServiceService, {
        name: 'events',
        address: config.EVENTS_ADDR,
        internalAuthSecret: config.INTERNAL_AUTH_SECRET,
        metrics,
      });
      resources.defer('events client', () => events.close());
      const source: EventSource = {
        async after(after, limit) {
          const page = await events.call.listEvents({ limit, after, hiddenProjectIds: [] }, systemContext());
          return { items: page.items.map(contractEventFromProto), lastId: page.lastId };
        },
        async lastId() {
          return (await events.call.listEvents({ limit: 1, hiddenProjectIds: [] }, systemContext())).lastId;
        },
      };

      const sender = new HttpSender({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, timeoutMs: config.WEBHOOK_TIMEOUT_MS, userAgent: USER_AGENT });
      resources.defer('http agents', () => sender.close());
      const ingest = new IngestRepository(orm);
      const actionDeliveries = new ActionDeliveryRepository(orm, secrets);
      const engine = new DeliveryEngine({
        repo: new DeliveryRepository(orm, secrets),
        actions: actionDeliveries,
        sender,
        schedule: { baseMs: config.WEBHOOK_BACKOFF_BASE_MS, maxMs: config.WEBHOOK_BACKOFF_MAX_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS },
        concurrency: config.WEBHOOK_CONCURRENCY,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        pollMs: config.NOTIFIER_POLL_MS,
        logger,
        metrics: nm,
      });
      let announcement: Subscription | undefined;
      const follower = new LogFollower({
        repo: ingest,
        source,
        logger,
        metrics: nm,
        batchMax: config.NOTIFIER_BATCH_MAX,
        pollMs: config.NOTIFIER_POLL_MS,
        coalesceMs: config.NOTIFIER_COALESCE_MS,
        // Every appended log row is announced on live.events: the follower reads the log when one
        // comes instead of at the next poll. It listens for one announcement at a time (a
        // subscription that ends after one message, renewed before the next read, the flush making
        // sure the server has it), so a busy log costs it a message per page, not one per event.
        listen: async () => {
          announcement = nc.subscribe(names.liveEvents, { max: 1, callback: () => follower.nudge() });
          await nc.flush();
        },
        onDeliveries: (webhookIds) => engine.nudge(webhookIds),
      });

      const grpc = new GrpcServer({ logger, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET });
      grpc.add<notifierv1.NotifierServiceServer>(
        NOTIFIER_SERVICE_NAME,
        notifierv1.NotifierServiceService,
        notifierHandlers({
          api: new NotifierApi({
            store: new ApiRepository(orm, secrets),
            actions: actionDeliveries,
            resolve: systemResolver,
            allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
            nudgeDeliveries: () => engine.nudge(),
          }),
        }),
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      const readiness = new Readiness().add('postgres', () => pingDb(orm)).add('nats', () => pingNats(nc));
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
      resources.defer('ops', () => ops.close());

      resources.defer('live.events subscription', () => announcement?.unsubscribe());

      resources.startLoop('delivery engine', engine);
      const retention = new DeliveryRetention({
        repo: new RetentionRepository(orm),
        retentionDays: config.WEBHOOK_DELIVERY_RETENTION_DAYS,
        intervalMs: config.WEBHOOK_PRUNE_INTERVAL_MS,
        batch: 5000,
        logger,
      });
      resources.startLoop('delivery log retention', retention);
      resources.startLoop('log follower', follower);
      resources.startLoop('notification projects', new ProjectBackfill({ store: ingest, source, logger }));

      return { grpcPort, httpPort: ops.port, follower, engine, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
