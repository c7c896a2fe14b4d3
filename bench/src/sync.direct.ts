/**
 * The sync import without the services around it (bench/README.md, "Sync import"): the records
 * service's sync module (its SyncImporter and SyncRepository, over the core module's RecordService)
 * composed as service.ts composes it, on a pool of its own, in the caller's process — no gateway, no
 * gRPC, no outbox relay, no event consumers. The statements are the ones the service runs; `sqlMs` and
 * `sqlMsBy` add up the time spent in them (each statement of the transaction, and BEGIN/COMMIT), so a
 * caller can tell the SQL apart from the checks around it.
 */
import { InProcessBus, natsNames, openSqlPool, type CallContext } from '@reelbase/lib-platform';
import { core, kernel, sync } from '@reelbase/records';

type SyncStore = sync.SyncStore;
type SyncTransaction = sync.SyncTransaction;

export interface DirectSyncImporter {
  import(bodyJson: string, ctx: CallContext): Promise<sync.SyncImportAnswer>;
  /** Milliseconds spent in SQL since the start (statements, BEGIN and COMMIT). */
  readonly sqlMs: number;
  /** The same, by statement (SyncTransaction's method names, and `begin+commit`). */
  readonly sqlMsBy: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

interface Spent {
  ms: number;
  by: Map<string, number>;
}

const add = (spent: Spent, name: string, ms: number) => {
  spent.ms += ms;
  spent.by.set(name, (spent.by.get(name) ?? 0) + ms);
};

/** Adds the time of every statement of `tx` to `spent`. */
function timed(tx: SyncTransaction, spent: Spent): SyncTransaction {
  const out = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(tx) as [string, (...args: unknown[]) => Promise<unknown>][]) {
    out[name] = async (...args: unknown[]) => {
      const t0 = performance.now();
      try {
        return await fn(...args);
      } finally {
        add(spent, name, performance.now() - t0);
      }
    };
  }
  return out as unknown as SyncTransaction;
}

export function openDirectSyncImporter(o: { databaseUrl: string; natsPrefix: string; maxEventBytes?: number }): DirectSyncImporter {
  // One small pool serves as both the writes and the short reads pool.
  const db = openSqlPool({ name: 'writes', application: 'bench-import', databaseUrl: o.databaseUrl, max: 2, statementTimeoutMs: 60_000 });
  const pools = { writes: db, reads: db };
  const names = natsNames(o.natsPrefix);
  const queryDb = core.openQueryPool({ databaseUrl: o.databaseUrl, timeoutMs: 10_000, max: 1 });
  const bus = new InProcessBus<kernel.RecordsBusTopics>(() => {});
  const service = new core.RecordService({
    store: new core.KnexRecordStore(pools, names, { db: queryDb, timeoutMs: 10_000 }),
    bus,
    maxEventBytes: o.maxEventBytes ?? 900_000,
  });
  const repo = new sync.SyncRepository(pools, names);
  const spent: Spent = { ms: 0, by: new Map() };
  const store: SyncStore = {
    findMappings: (q, limit, reader) => repo.findMappings(q, limit, reader),
    mappingsOf: (ids) => repo.mappingsOf(ids),
    findMany: (ids, reader) => repo.findMany(ids, reader),
    echoes: (source, writes) => repo.echoes(source, writes),
    typeRenames: () => repo.typeRenames(),
    syncTransaction: async (fn) => {
      // BEGIN and COMMIT: the whole transaction less the time inside fn (whose statements count there).
      const t0 = performance.now();
      let fnMs = 0;
      try {
        return await repo.syncTransaction(async (tx) => {
          const f0 = performance.now();
          try {
            return await fn(timed(tx, spent));
          } finally {
            fnMs = performance.now() - f0;
          }
        });
      } finally {
        add(spent, 'begin+commit', performance.now() - t0 - fnMs);
      }
    },
  };
  const importer = new sync.SyncImporter({ store, records: service, bus });
  return {
    import: (bodyJson, ctx) => importer.import(bodyJson, ctx),
    get sqlMs() {
      return spent.ms;
    },
    get sqlMsBy() {
      return spent.by;
    },
    close: async () => {
      await db.destroy();
      await queryDb.destroy();
    },
  };
}
