/**
 * Starts the schema service: database (migrations), NATS (EVENTS stream), the outbox relay,
 * the records client, the gRPC server and the ops server; then seeds the built-in definitions,
 * hands records the current snapshot and completes unfinished renames, and keeps doing so
 * every SCHEMA_SYNC_MS. It also serves the actions (ActionsService), which read records and
 * queue webhook actions with the notifier, and the scheduler (SchedulerService), whose clock
 * (every SCHEDULER_TICK_MS) submits farm jobs to records and queues webhooks with the notifier, and
 * whose old runs are pruned every SCHEDULER_PRUNE_MS.
 * Used by main.ts and by tests in-process.
 */
import {
  GrpcServer,
  InProcessBus,
  Metrics,
  OutboxRelay,
  Readiness,
  RecordsClient,
  IntervalLoop,
  SecretCipher,
  connectNats,
  decodeSecretsKey,
  createGrpcClient,
  createLogger,
  ensureEventsStream,
  natsNames,
  openOrm,
  pingDb,
  pingNats,
  startOpsServer,
  withResources,
  type Logger,
  type OutboxTopics,
  type RunningService,
  ormPoolSample,
} from '@reelbase/lib-platform';
import { actionsv1, addonsv1, farmv1, notifierv1, schedulerv1, schemav1 } from '@reelbase/proto';
import type { SchemaConfig } from './config.js';
import { ActionsService } from './actions/domain/actions.service.js';
import { configDigest } from './kernel/domain/config.events.js';
import { AddonsService } from './addons/domain/addons.service.js';
import type { SchemaStore } from './definitions/domain/ports.js';
import { SchemaService } from './definitions/domain/schema.service.js';
import { SchedulerLoop } from './scheduler/loop/scheduler.loop.js';
import { SchedulerService } from './scheduler/domain/scheduler.service.js';
import { ACTIONS_SERVICE_NAME, actionsHandlers } from './actions/grpc/actions.handler.js';
import { ADDONS_SERVICE_NAME, addonsHandlers } from './addons/grpc/addons.handler.js';
import { SCHEDULER_SERVICE_NAME, schedulerHandlers } from './scheduler/grpc/scheduler.handler.js';
import { SCHEMA_SERVICE_NAME, schemaHandlers } from './definitions/grpc/schema.handler.js';
import { NotifierActionDeliveries } from './actions/notifier/action.deliveries.js';
import { NotifierScheduleDeliveries } from './scheduler/notifier/schedule.deliveries.js';
import { ActionRecords } from './actions/records/actions.records.js';
import { FaultSwitch } from './definitions/faults/fault.switch.js';
import { SchemaRecords } from './definitions/records/records.client.js';
import { RecordsScheduleAuthors } from './scheduler/records/scheduler.authors.js';
import { SchedulerFarm } from './scheduler/records/scheduler.farm.js';
import { ActionRepository } from './actions/store/actions.repository.js';
import { AddonRepository } from './addons/store/addons.repository.js';
import { DefinitionRepository } from './definitions/store/definition.repository.js';
import { SCHEMA_OUTBOX } from './kernel/store/schema.outbox.js';
import { SchedulerRepository } from './scheduler/store/scheduler.repository.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from './migrations.js';
import { RecordsProjectDirectory } from './addons/records/addons.projects.js';

/** A running schema service. */
export interface RunningSchema extends RunningService {
  grpcPort: number;
}

/** Starts every part of the service; rejects (after cleaning up) when a dependency is down. */
export function startSchema(config: SchemaConfig, logger?: Logger): Promise<RunningSchema> {
  const log = logger ?? createLogger('schema', config.LOG_LEVEL);
  const metrics = new Metrics('schema');
  const names = natsNames(config.NATS_PREFIX);
  return withResources(
    log,
    async (resources) => {
      const orm = await openOrm({ clientUrl: config.DATABASE_URL, schema: SCHEMA_SCHEMA, entities: [], migrations: SCHEMA_MIGRATIONS, logger: log });
      resources.defer('postgres', () => orm.close(true));
      const nc = await connectNats(config.NATS_URL, 'schema', log);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      await ensureEventsStream(nc, names);
      const db = orm.em.getConnection().getKnex();

      const bus = new InProcessBus<OutboxTopics>((err, topic) => log.error({ err, topic }, 'bus subscriber failed'));
      const relay = new OutboxRelay({
        ...SCHEMA_OUTBOX,
        db,
        nc,
        names,
        logger: log,
        metrics,
        metricNames: { published: 'schema_outbox_published_total', backlog: 'schema_outbox_backlog' },
        pollMs: config.OUTBOX_POLL_MS,
      });
      relay.wakeOn(bus);
      const repository = new DefinitionRepository(db, names);
      const versionGauge = metrics.gauge('schema_version', 'Schema version last committed or read by this replica');
      const renames = metrics.counter('schema_renames_total', 'Rename cascades completed by this replica', ['kind']);
      const rewrittenTotal = metrics.counter('schema_rename_records_total', 'Records rewritten by rename cascades of this replica');
      // Every committed event wakes the relay.
      const store: SchemaStore = {
        load: async () => {
          const doc = await repository.load();
          versionGauge.set(doc.version);
          return doc;
        },
        version: () => repository.version(),
        pendingRenames: () => repository.pendingRenames(),
        commit: async (change, beforeCommit) => {
          const out = await repository.commit(change, beforeCommit);
          if (out) {
            for (const e of out.events) bus.emit('committed', e);
            versionGauge.set(out.doc.version);
          }
          return out;
        },
        finishRename: async (id, rewritten, event) => {
          const done = await repository.finishRename(id, rewritten, event);
          if (done) {
            bus.emit('committed', event);
            const kind = (event.changes.rename as { kind?: string } | undefined)?.kind ?? 'unknown';
            renames.inc({ kind });
            rewrittenTotal.inc(rewritten);
          }
          return done;
        },
      };
      const recordsClient = new RecordsClient({ address: config.RECORDS_ADDR, internalAuthSecret: config.INTERNAL_AUTH_SECRET, deadlineMs: 10_000, metrics });
      resources.defer('records client', () => recordsClient.close());
      const records = new SchemaRecords(recordsClient);
      const service = new SchemaService({ store, records, faults: new FaultSwitch(config.SCHEMA_FAULT, log), logger: log });
      // Addons (docs/architecture.md, "Addons"): their events wake the same relay.
      const addons = new AddonsService({
        store: new AddonRepository(db, names, (e) => bus.emit('committed', e)),
        projects: new RecordsProjectDirectory(recordsClient),
      });

      const notifier = createGrpcClient(notifierv1.NotifierServiceClient, notifierv1.NotifierServiceService, {
        name: 'notifier',
        address: config.NOTIFIER_ADDR,
        internalAuthSecret: config.INTERNAL_AUTH_SECRET,
        deadlineMs: 5000,
        metrics,
      });
      resources.defer('notifier client', () => notifier.close());
      const cipher = new SecretCipher(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS ?? []);
      // The digest events of Admin-only configuration show instead of URLs, secrets and payloads.
      const digest = configDigest(decodeSecretsKey(config.SECRETS_KEY)!);
      const actionStore = new ActionRepository(db, names, cipher, (e) => bus.emit('committed', e));
      // Custom action secrets sealed with an earlier SECRETS_KEY are sealed again with the current one.
      const resealed = await actionStore.sealStored();
      if (resealed > 0) log.info({ sealed: resealed }, 'custom action secrets encrypted with the current SECRETS_KEY');
      const actions = new ActionsService({
        store: actionStore,
        records: new ActionRecords(recordsClient),
        deliveries: new NotifierActionDeliveries(notifier.call),
        schema: () => store.load(),
        digest,
      });

      // The scheduler (docs/architecture.md, "Scheduler"): farm jobs go to records' FarmService.
      const farm = createGrpcClient(farmv1.FarmServiceClient, farmv1.FarmServiceService, {
        name: 'farm',
        address: config.RECORDS_ADDR,
        internalAuthSecret: config.INTERNAL_AUTH_SECRET,
        deadlineMs: 5000,
        metrics,
      });
      resources.defer('farm client', () => farm.close());
      const scheduler = new SchedulerService({
        store: new SchedulerRepository(db, names, cipher, (e) => bus.emit('committed', e)),
        farm: new SchedulerFarm(farm.call),
        deliveries: new NotifierScheduleDeliveries(notifier.call),
        authors: new RecordsScheduleAuthors(recordsClient),
        digest,
        limits: {
          maxSchedules: config.SCHEDULER_MAX_SCHEDULES,
          runsKept: config.SCHEDULER_RUNS_KEPT,
          runRetentionDays: config.SCHEDULER_RUN_RETENTION_DAYS,
        },
      });

      const grpc = new GrpcServer({ logger: log, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET });
      grpc.add<schemav1.SchemaServiceServer>(SCHEMA_SERVICE_NAME, schemav1.SchemaServiceService, schemaHandlers({ service }));
      grpc.add<addonsv1.AddonsServiceServer>(ADDONS_SERVICE_NAME, addonsv1.AddonsServiceService, addonsHandlers({ addons }));
      grpc.add<actionsv1.ActionsServiceServer>(ACTIONS_SERVICE_NAME, actionsv1.ActionsServiceService, actionsHandlers({ actions }));
      grpc.add<schedulerv1.SchedulerServiceServer>(SCHEDULER_SERVICE_NAME, schedulerv1.SchedulerServiceService, schedulerHandlers({ scheduler }));
      const readiness = new Readiness()
        .add('postgres', () => pingDb(orm))
        .add('nats', () => pingNats(nc))
        .add('records', async () => {
          if (!service.synced) throw new Error('records does not hold the schema yet');
        });
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger: log });
      resources.defer('ops', () => ops.close());
      resources.startLoop('outbox relay', relay);

      // Seeding, the snapshot for records and unfinished renames: retried every 500 ms until records
      // answers (it may start later), then re-checked every SCHEMA_SYNC_MS.
      const syncFailed = (err: unknown) => log.warn({ err }, 'schema sync failed; retrying');
      // The first attempt runs before the service takes calls, so a rename a crash left unfinished
      // is completed before any new change (when records answers; otherwise the loop retries).
      await service.sync().catch(syncFailed);
      resources.startLoop(
        'schema sync',
        new IntervalLoop(
          () => (service.synced ? config.SCHEMA_SYNC_MS : Math.min(500, config.SCHEMA_SYNC_MS)),
          () => service.sync(),
          syncFailed,
        ),
      );
      // Each replica ticks; a run is made once between them (docs/scheduler.md).
      resources.startLoop(
        'scheduler',
        new SchedulerLoop(
          config.SCHEDULER_TICK_MS,
          () => scheduler.runDue(),
          (err) => log.warn({ err }, 'scheduler tick failed; the next one tries again'),
        ),
      );
      // Runs past the kept number or age go (docs/scheduler.md, "Limits"), one replica at a time.
      resources.startLoop(
        'scheduler run pruning',
        new IntervalLoop(
          config.SCHEDULER_PRUNE_MS,
          async () => {
            const deleted = await scheduler.prune();
            if (deleted > 0) log.info({ deleted }, 'pruned schedule runs');
          },
          (err) => log.warn({ err }, 'pruning schedule runs failed; the next time tries again'),
        ),
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      return { grpcPort, httpPort: ops.port, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
