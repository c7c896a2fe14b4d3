/**
 * The site sync module's adapter on PostgreSQL: implements SiteSyncStore (sitesync.ports.ts) with
 * the statements of sitesync.repository.ts, each transaction's statements bound to it, every
 * method inside `guarded`.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded, type NatsNames } from '@reelbase/lib-platform';
import type { RecordsPools } from '../../kernel/store/knex.db.js';
import { outboxRow } from '../../kernel/store/outbox.repository.js';
import type { SiteSyncStore, SiteSyncTransaction } from '../domain/sitesync.ports.js';
import type { Site, SiteState, StateFilter, StateKey, StatusCounts } from '../domain/sitesync.types.js';
import { SiteSyncRepository } from './sitesync.repository.js';

export class KnexSiteSyncStore implements SiteSyncStore {
  private readonly sitesync: SiteSyncRepository;

  /** Transactions on the writes pool; the lists and single reads on the reads pool. */
  private readonly db: Knex;

  constructor(
    pools: RecordsPools,
    private readonly names: NatsNames,
  ) {
    this.db = pools.writes;
    this.sitesync = new SiteSyncRepository(pools.reads);
  }

  siteSyncTransaction<T>(fn: (tx: SiteSyncTransaction) => Promise<T>): Promise<T> {
    return guarded(() => this.db.transaction((trx) => fn(this.statements(trx))));
  }

  listSites(): Promise<Site[]> {
    return guarded(() => this.sitesync.listSites());
  }

  findSite(code: string): Promise<Site | undefined> {
    return guarded(() => this.sitesync.findSite(code));
  }

  findState(key: StateKey, reader: string | null): Promise<SiteState | undefined> {
    return guarded(() => this.sitesync.findState(key, reader));
  }

  listStates(filter: StateFilter, after: StateKey | undefined, limit: number, reader: string | null): Promise<SiteState[]> {
    return guarded(() => this.sitesync.listStates(filter, after, limit, reader));
  }

  countStates(filter: Pick<StateFilter, 'projectId' | 'site'>, reader: string | null): Promise<StatusCounts> {
    return guarded(() => this.sitesync.countStates(filter, reader));
  }

  /** The site sync statements of one transaction, and the outbox of the same transaction. */
  private statements(trx: Knex.Transaction): SiteSyncTransaction {
    const repo = new SiteSyncRepository(trx);
    return {
      upsertSite: (site) => repo.upsertSite(site),
      lockSite: (code, mode) => repo.findSite(code, mode),
      deleteSite: (code) => repo.deleteSite(code),
      countStatesOf: (site) => repo.countStatesOf(site),
      liveRepresentations: (ids, reader) => repo.liveRepresentations(ids, reader),
      requestStates: (reps, site, priority, keep) => repo.requestStates(reps, site, priority, keep),
      claim: (input) => repo.claim(input),
      lapse: (scope, max, error) => repo.lapse(scope, max, error),
      report: (change) => repo.report(change),
      findState: (key, reader) => repo.findState(key, reader, true),
      setState: (key, status, priority, reset) => repo.setState(key, status, priority, reset),
      appendEvents: (events) => repo.appendEvents(events.map((e) => outboxRow(this.names, e))),
    };
  }
}
