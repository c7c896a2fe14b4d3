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
  knexPoolSample,
  openSqlPool,
} from '@reelbase/lib-platform';
import type { Knex } from '@mikro-orm/postgresql';
import { farmv1, idempotencyv1, recordsv1, sitesyncv1, syncv1 } from '@reelbase/proto';
import type { RecordsConfig } from './config.js';
import {
  KeyedWrites,
  KnexRecordStore,
  openQueryPool,
  QueryGate,
  RecordQueries,
  RecordService,
  RecordSummaries,
  RecordViews,
  RECORDS_SERVICE_NAME,
  recordsHandlers,
  SchemaAdmin,
  SUMMARY_LINE,
} from './core/index.js';
import { KnexShareLinkStore, SharePasswords, shareLinkHandlers, ShareLinks } from './shares/index.js';
import { FARM_SERVICE_NAME, farmHandlers, FarmRepository, FarmService, openFarmPool, readFarmDepth } from './farm/index.js';
import { KnexSiteSyncStore, SiteSync, SITESYNC_SERVICE_NAME, siteSyncHandlers, readSiteSyncDepth } from './sitesync/index.js';
import { SYNC_SERVICE_NAME, syncHandlers, SyncImporter, SyncReads, SyncRepository } from './sync/index.js';
import { IDEMPOTENCY_SERVICE_NAME, idempotencyHandlers, IdempotencyKeys, IdempotencyRepository } from './idempotency/index.js';
import { OutboxEntitySchema, RECORDS_OUTBOX, RecordEntitySchema, type RecordsBusTopics } from './kernel/index.js';
import { FaultSwitch } from './fault.switch.js';
import { RECORDS_MIGRATIONS } from './migrations.js';

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
        poolMax: config.WRITE_POOL_MAX,
      });
      resources.defer('postgres', () => orm.close(true));
      const nc = await connectNats(config.NATS_URL, 'records', log);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      await ensureEventsStream(nc, names);

      // One pool per purpose (docs/architecture.md, "Reaching PostgreSQL"), each named and sized in config.
      const db = orm.em.getConnection().getKnex();
      const reads = openSqlPool({
        name: 'reads',
        application: 'records',
        databaseUrl: config.DATABASE_URL,
        max: config.READ_POOL_MAX,
        statementTimeoutMs: config.READ_TIMEOUT_MS,
      });
      resources.defer('reads pool', () => reads.destroy());
      const pools = { writes: db, reads };
      metrics.watchPool('writes', ormPoolSample(orm));
      metrics.watchPool('reads', knexPoolSample(reads, config.READ_POOL_MAX));
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
      resources.defer('queries pool', () => queryDb.destroy());
      metrics.watchPool('queries', knexPoolSample(queryDb, config.QUERY_POOL_MAX));
      // At least one connection is always left to short queries.
      const summaryGate = new QueryGate(
        Math.max(1, Math.min(config.SUMMARY_CONCURRENCY, config.QUERY_POOL_MAX - 1)),
        config.QUERY_TIMEOUT_MS,
        SUMMARY_LINE,
        'summaries',
      );
      const store = new KnexRecordStore(pools, names, { db: queryDb, timeoutMs: config.QUERY_TIMEOUT_MS, summaries: summaryGate });
      const service = new RecordService({ store, bus, maxEventBytes });

      const farmDb = openFarmPool({ databaseUrl: config.DATABASE_URL, max: config.FARM_POOL_MAX });
      resources.defer('farm pool', () => farmDb.destroy());
      metrics.watchPool('farm', knexPoolSample(farmDb, config.FARM_POOL_MAX));
      const farm = new FarmService({
        store: new FarmRepository(farmDb, names),
        committed: (event) => bus.emit('committed', event),
      });

      // Idempotency keys of the gateway's POSTs (docs/architecture.md, "Idempotency keys"): a create and a
      // batch carry theirs in their own call (KeyedWrites), the other POSTs claim and finish them.
      const keys = new IdempotencyKeys(new IdempotencyRepository(db));

      const grpc = new GrpcServer({ logger: log, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET });
      grpc.add<farmv1.FarmServiceServer>(FARM_SERVICE_NAME, farmv1.FarmServiceService, farmHandlers({ farm }));
      grpc.add<recordsv1.RecordsServiceServer>(RECORDS_SERVICE_NAME, recordsv1.RecordsServiceService, {
        ...recordsHandlers({
          records: service,
          keyed: new KeyedWrites(service, keys),
          admin: new SchemaAdmin(store),
          views: new RecordViews(store),
          queries: new RecordQueries(store),
          summaries: new RecordSummaries(store),
        }),
        ...shareLinkHandlers({
          shares: new ShareLinks(new KnexShareLinkStore(pools), service, new SharePasswords(config.SHARE_PASSWORD_SCRYPT_COST)),
        }),
      });
      const sitesync = new SiteSync({ store: new KnexSiteSyncStore(pools, names), bus });
      grpc.add<sitesyncv1.SiteSyncServiceServer>(SITESYNC_SERVICE_NAME, sitesyncv1.SiteSyncServiceService, siteSyncHandlers({ sitesync }));
      // Sync (docs/architecture.md, "Sync"): its own service on the same server, through the same write rules.
      const syncStore = new SyncRepository(pools, names);
      grpc.add<syncv1.SyncServiceServer>(
        SYNC_SERVICE_NAME,
        syncv1.SyncServiceService,
        syncHandlers({ importer: new SyncImporter({ store: syncStore, records: service, bus }), reads: new SyncReads(syncStore) }),
      );
      grpc.add<idempotencyv1.IdempotencyServiceServer>(IDEMPOTENCY_SERVICE_NAME, idempotencyv1.IdempotencyServiceService, idempotencyHandlers({ keys }));
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
      const [farmDepth, siteSyncDepth] = await Promise.all([readFarmDepth(db), readSiteSyncDepth(db)]);
      for (const [state, n] of Object.entries(farmDepth)) farm.set({ state }, n);
      for (const [status, n] of Object.entries(siteSyncDepth)) sitesync.set({ status }, n);
    } catch (err) {
      log.debug({ err }, 'could not read the queue depths');
    }
  });
}
