/**
 * Starts the records service: database (migrations), NATS (EVENTS stream), the outbox relay,
 * the gRPC server and the ops server. Used by main.ts and by tests in-process.
 */
import {
  GrpcServer,
  InProcessBus,
  IntervalLoop,
  Metrics,
  OutboxRelay,
  Readiness,
  connectNats,
  createLogger,
  ensureEventsStream,
  natsNames,
  openOrm,
  pingDb,
  pingNats,
  startOpsServer,
  withResources,
  type Logger,
  type RunningService,
  ormPoolSample,
  pgPoolSample,
} from '@reelbase/lib-platform';
import type { Knex } from '@mikro-orm/postgresql';
import { farmv1, idempotencyv1, recordsv1, sitesyncv1, syncv1 } from '@reelbase/proto';
import type { RecordsConfig } from './config.js';
import { RecordService, type RecordsBusTopics } from './domain/record.service.js';
import { RecordViews } from './domain/record.views.js';
import { RecordQueries } from './domain/record.query.js';
import { RecordSummaries } from './domain/record.summary.js';
import { SchemaAdmin } from './domain/schema.admin.js';
import { ShareLinks } from './domain/share.links.js';
import { SharePasswords } from './domain/share.secrets.js';
import { RECORDS_SERVICE_NAME, recordsHandlers } from './grpc/records.handler.js';
import { FARM_SERVICE_NAME, farmHandlers } from './grpc/farm.handler.js';
import { FarmService } from './domain/farm/farm.service.js';
import { FarmRepository, openFarmPool } from './store/farm.repository.js';
import { SiteSync } from './domain/sitesync/sitesync.service.js';
import { SITESYNC_SERVICE_NAME, siteSyncHandlers } from './grpc/sitesync.handler.js';
import { SYNC_SERVICE_NAME, syncHandlers } from './grpc/sync.handler.js';
import { SyncImporter } from './domain/sync/sync.import.js';
import { SyncReads } from './domain/sync/sync.reads.js';
import { SyncRepository } from './store/sync.repository.js';
import { IdempotencyKeys } from './domain/idempotency/idempotency.keys.js';
import { IDEMPOTENCY_SERVICE_NAME, idempotencyHandlers } from './grpc/idempotency.handler.js';
import { IdempotencyRepository } from './store/idempotency.repository.js';
import { FaultSwitch } from './outbox/fault.switch.js';
import { RECORDS_MIGRATIONS } from './store/migrations.js';
import { OutboxEntitySchema } from './store/outbox.entity.js';
import { RECORDS_OUTBOX } from './store/outbox.repository.js';
import { RecordEntitySchema } from './store/record.entity.js';
import { KnexRecordStore } from './store/knex.record.store.js';
import { openQueryPool, QueryGate, SUMMARY_LINE } from './store/query.pool.js';
import { readQueueDepths } from './store/queue.depth.js';

/** A running records service; its stop closes gRPC, then drains the relay a last time, then NATS, then the pool. */
export interface RunningRecords extends RunningService {
  grpcPort: number;
}

/** Starts every part of the service; rejects (after cleaning up) when a dependency is down. */
export function startRecords(config: RecordsConfig, logger?: Logger): Promise<RunningRecords> {
  const log = logger ?? createLogger('records', config.LOG_LEVEL);
  const metrics = new Metrics('records');
  const names = natsNames(config.NATS_PREFIX);
  const fault = new FaultSwitch(config.RECORDS_FAULT, log);
  return withResources(
    log,
    async (resources) => {
      const orm = await openOrm({
        clientUrl: config.DATABASE_URL,
        schema: 'records',
        entities: [RecordEntitySchema, OutboxEntitySchema],
        migrations: RECORDS_MIGRATIONS,
        logger: log,
      });
      resources.defer('postgres', () => orm.close(true));
      const nc = await connectNats(config.NATS_URL, 'records', log);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      await ensureEventsStream(nc, names);

      const db = orm.em.getConnection().getKnex();
      const bus = new InProcessBus<RecordsBusTopics>((err, topic) => log.error({ err, topic }, 'bus subscriber failed'));
      // Subscription order matters: the fault switch must act before the relay can publish.
      bus.subscribe('committed', () => fault.afterCommit());
      const relay = new OutboxRelay({
        ...RECORDS_OUTBOX,
        db,
        nc,
        names,
        logger: log,
        metrics,
        pollMs: config.OUTBOX_POLL_MS,
        afterPublish: () => fault.afterPublish(),
      });
      relay.wakeOn(bus);
      // Keep events under the server's max_payload with room for headers and the envelope.
      const serverMax = nc.info?.max_payload ?? Number.MAX_SAFE_INTEGER;
      const maxEventBytes = Math.min(config.MAX_EVENT_BYTES, serverMax - 16 * 1024);
      const queryDb = openQueryPool({ databaseUrl: config.DATABASE_URL, timeoutMs: config.QUERY_TIMEOUT_MS, max: config.QUERY_POOL_MAX });
      resources.defer('query pool', () => queryDb.end());
      // At least one connection is always left to short queries.
      const summaryGate = new QueryGate(
        Math.max(1, Math.min(config.SUMMARY_CONCURRENCY, config.QUERY_POOL_MAX - 1)),
        config.QUERY_TIMEOUT_MS,
        SUMMARY_LINE,
        'summaries',
      );
      const store = new KnexRecordStore(db, names, { db: queryDb, timeoutMs: config.QUERY_TIMEOUT_MS, summaries: summaryGate });
      const service = new RecordService({ store, bus, maxEventBytes });

      const farmDb = openFarmPool({ databaseUrl: config.DATABASE_URL, max: config.FARM_POOL_MAX });
      resources.defer('farm pool', () => farmDb.end());
      const farm = new FarmService({
        store: new FarmRepository(farmDb, names),
        committed: (event) => bus.emit('committed', event),
      });

      const grpc = new GrpcServer({ logger: log, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET });
      grpc.add<farmv1.FarmServiceServer>(FARM_SERVICE_NAME, farmv1.FarmServiceService, farmHandlers({ farm }));
      grpc.add<recordsv1.RecordsServiceServer>(
        RECORDS_SERVICE_NAME,
        recordsv1.RecordsServiceService,
        recordsHandlers({
          records: service,
          admin: new SchemaAdmin(store),
          views: new RecordViews(store),
          queries: new RecordQueries(store),
          shares: new ShareLinks(store, service, new SharePasswords(config.SHARE_PASSWORD_SCRYPT_COST)),
          summaries: new RecordSummaries(store),
        }),
      );
      const sitesync = new SiteSync({ store, bus });
      grpc.add<sitesyncv1.SiteSyncServiceServer>(SITESYNC_SERVICE_NAME, sitesyncv1.SiteSyncServiceService, siteSyncHandlers({ sitesync }));
      // Sync (docs/architecture.md, "Sync"): its own service on the same server, through the same write rules.
      const syncStore = new SyncRepository(db, names);
      grpc.add<syncv1.SyncServiceServer>(
        SYNC_SERVICE_NAME,
        syncv1.SyncServiceService,
        syncHandlers({ importer: new SyncImporter({ store: syncStore, records: service, bus }), reads: new SyncReads(syncStore) }),
      );
      // Idempotency keys of the gateway's POSTs (docs/architecture.md, "Idempotency keys").
      const keys = new IdempotencyKeys(new IdempotencyRepository(db));
      grpc.add<idempotencyv1.IdempotencyServiceServer>(IDEMPOTENCY_SERVICE_NAME, idempotencyv1.IdempotencyServiceService, idempotencyHandlers({ keys }));
      metrics.watchPool('query', pgPoolSample(queryDb, config.QUERY_POOL_MAX));
      metrics.watchPool('farm', pgPoolSample(farmDb, config.FARM_POOL_MAX));
      watchQueueDepths(metrics, db, log);
      const readiness = new Readiness().add('postgres', () => pingDb(orm)).add('nats', () => pingNats(nc));
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger: log });
      resources.defer('ops', () => ops.close());
      resources.startLoop('outbox relay', relay);
      // Expired leases are finalised by claims and reports too; the sweeper keeps job status and
      // events from waiting for the next claim (safe on every replica: each chunk is taken with
      // FOR UPDATE SKIP LOCKED).
      resources.startLoop(
        'farm sweeper',
        new IntervalLoop(
          config.FARM_SWEEP_MS,
          async () => {
            await farm.expireLeases(500);
          },
          (err) => log.warn({ err }, 'farm sweeper failed; it tries again'),
        ),
      );
      resources.startLoop(
        'sitesync sweeper',
        new IntervalLoop(
          config.SITESYNC_SWEEP_MS,
          () => sitesync.sweep(),
          (err) => log.warn({ err }, 'site sync sweep failed; the next one tries again'),
        ),
      );
      resources.startLoop(
        'idempotency sweeper',
        new IntervalLoop(
          config.IDEMPOTENCY_SWEEP_MS,
          async () => {
            await keys.sweep();
          },
          (err) => log.warn({ err }, 'idempotency key sweep failed; the next one tries again'),
        ),
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      return { grpcPort, httpPort: ops.port, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

/**
 * `farm_chunks{state}` and `sitesync_states{status}`: the depth of the queues records keeps, read
 * at every scrape (every replica reports the same database-wide counts: take the max). A failed
 * read keeps the last values and is logged at debug.
 */
function watchQueueDepths(metrics: Metrics, db: Knex, log: Logger): void {
  const sitesync = metrics.gauge('sitesync_states', 'Site-sync states by status (queued, in_progress, failed), database-wide', ['status']);
  metrics.collectedGauge('farm_chunks', 'Render-farm chunks by state (queued, leased), database-wide', ['state'], async (farm) => {
    try {
      const d = await readQueueDepths(db);
      for (const [state, n] of Object.entries(d.farm)) farm.set({ state }, n);
      for (const [status, n] of Object.entries(d.sitesync)) sitesync.set({ status }, n);
    } catch (err) {
      log.debug({ err }, 'could not read the queue depths');
    }
  });
}
