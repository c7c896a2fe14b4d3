/**
 * The {@link AddonStore} on PostgreSQL (schema `schema`, migration `schema-0003-addons`). Every
 * change of one addon runs in one transaction under a transaction-level advisory lock of its
 * name (`schema:addon:<name>`), so registering, deleting, pinning and overriding one addon
 * happen one at a time across replicas, and their events go into schema's outbox in the same
 * transaction. A settings read is one statement.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded, sqlIsoMicros, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import { appendSchemaEvent } from '../../kernel/store/schema.outbox.js';
import type { AddonHead, AddonSettingsInputs, AddonStore, AddonTx, AddonVersion } from '../domain/addons.ports.js';

type Db = Knex | Knex.Transaction;
type Obj = Record<string, unknown>;

interface VersionRow {
  name: string;
  version: string;
  title: string;
  settings_schema: Obj;
  defaults: Obj;
  digest: string;
  created_at: string;
}

const VERSION_COLUMNS = `v.name, v.version, v.title, v.settings_schema, v.defaults, v.digest, ${sqlIsoMicros('v.created_at')} as created_at`;

/** The statement of one settings read: the addon, the pin, the version read and both layers. */
export const ADDON_SETTINGS_SQL = `
  with a as (select name, production_version from schema.addon where name = ?),
       p as (select version from schema.addon_pin where name = ? and project_id = ?::uuid)
  select a.production_version,
         (select version from p) as pin,
         v.version, v.title, v.settings_schema, v.defaults, v.digest, ${sqlIsoMicros('v.created_at')} as created_at,
         (select overrides from schema.addon_override o where o.name = a.name and o.project_id is null) as studio,
         (select overrides from schema.addon_override o where o.name = a.name and o.project_id = ?::uuid) as project
    from a
    left join schema.addon_version v
      on v.name = a.name and v.version = coalesce(?::text, (select version from p), a.production_version)`;

const toVersion = (r: VersionRow): AddonVersion => ({
  name: r.name,
  version: r.version,
  title: r.title,
  settings_schema: r.settings_schema,
  defaults: r.defaults,
  digest: r.digest,
  created_at: r.created_at,
});

async function headOf(db: Db, name: string): Promise<AddonHead | undefined> {
  const res = await db.raw<{ rows: { production_version: string; version: string | null; title: string | null }[] }>(
    `select a.production_version, v.version, v.title
       from schema.addon a left join schema.addon_version v on v.name = a.name
      where a.name = ?`,
    [name],
  );
  const first = res.rows[0];
  if (!first) return undefined;
  return {
    name,
    production_version: first.production_version,
    versions: res.rows.filter((r) => r.version !== null).map((r) => ({ version: r.version!, title: r.title! })),
  };
}

async function versionOf(db: Db, name: string, version: string): Promise<AddonVersion | undefined> {
  const res = await db.raw<{ rows: VersionRow[] }>(`select ${VERSION_COLUMNS} from schema.addon_version v where v.name = ? and v.version = ?`, [name, version]);
  return res.rows[0] ? toVersion(res.rows[0]) : undefined;
}

/** One transaction holding an addon's lock. */
class AddonTransaction implements AddonTx {
  readonly events: StreamEvent[] = [];

  constructor(
    private readonly trx: Knex.Transaction,
    private readonly name: string,
    private readonly names: NatsNames,
  ) {}

  head(): Promise<AddonHead | undefined> {
    return headOf(this.trx, this.name);
  }

  version(version: string): Promise<AddonVersion | undefined> {
    return versionOf(this.trx, this.name, version);
  }

  async insertVersion(v: Omit<AddonVersion, 'created_at'>): Promise<AddonVersion> {
    await this.trx.raw('insert into schema.addon (name, production_version) values (?, ?) on conflict (name) do nothing', [this.name, v.version]);
    const res = await this.trx.raw<{ rows: VersionRow[] }>(
      `insert into schema.addon_version as v (name, version, title, settings_schema, defaults, digest)
       values (?, ?, ?, ?::jsonb, ?::jsonb, ?)
       returning ${VERSION_COLUMNS}`,
      [this.name, v.version, v.title, JSON.stringify(v.settings_schema), JSON.stringify(v.defaults), v.digest],
    );
    return toVersion(res.rows[0]!);
  }

  async deleteVersion(version: string): Promise<void> {
    await this.trx.raw('delete from schema.addon_version where name = ? and version = ?', [this.name, version]);
  }

  async setProduction(version: string): Promise<void> {
    await this.trx.raw('update schema.addon set production_version = ?, updated_at = now() where name = ?', [version, this.name]);
  }

  async pinCount(version: string): Promise<number> {
    const res = await this.trx.raw<{ rows: { n: string }[] }>('select count(*) as n from schema.addon_pin where name = ? and version = ?', [
      this.name,
      version,
    ]);
    return Number(res.rows[0]?.n ?? 0);
  }

  async overrides(projectId: string | null): Promise<Obj | undefined> {
    const res = await this.trx.raw<{ rows: { overrides: Obj }[] }>(
      'select overrides from schema.addon_override where name = ? and project_id is not distinct from ?::uuid',
      [this.name, projectId],
    );
    return res.rows[0]?.overrides;
  }

  async putOverrides(projectId: string | null, overrides: Obj): Promise<void> {
    await this.trx.raw(
      `insert into schema.addon_override (name, project_id, overrides) values (?, ?::uuid, ?::jsonb)
       on conflict (name, coalesce(project_id, '00000000-0000-0000-0000-000000000000'::uuid))
       do update set overrides = excluded.overrides, updated_at = now()`,
      [this.name, projectId, JSON.stringify(overrides)],
    );
  }

  async pin(projectId: string): Promise<string | null | undefined> {
    const res = await this.trx.raw<{ rows: { version: string | null }[] }>('select version from schema.addon_pin where name = ? and project_id = ?::uuid', [
      this.name,
      projectId,
    ]);
    return res.rows[0] === undefined ? undefined : res.rows[0].version;
  }

  async setPin(projectId: string, version: string | null): Promise<void> {
    await this.trx.raw(
      `insert into schema.addon_pin (name, project_id, version) values (?, ?::uuid, ?)
       on conflict (name, project_id) do update set version = excluded.version, updated_at = now()`,
      [this.name, projectId, version],
    );
  }

  async append(event: StreamEvent): Promise<void> {
    await appendSchemaEvent(this.trx, this.names, event);
    this.events.push(event);
  }
}

export class AddonRepository implements AddonStore {
  /**
   * `committed` is called with each event once its transaction has committed (the service's
   * bus, which wakes the outbox relay).
   */
  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
    private readonly committed: (event: StreamEvent) => void = () => {},
  ) {}

  list(): Promise<AddonHead[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { name: string; production_version: string; version: string | null; title: string | null }[] }>(
        `select a.name, a.production_version, v.version, v.title
           from schema.addon a left join schema.addon_version v on v.name = a.name
          order by a.name`,
      );
      const heads = new Map<string, AddonHead>();
      for (const r of res.rows) {
        let head = heads.get(r.name);
        if (!head) heads.set(r.name, (head = { name: r.name, production_version: r.production_version, versions: [] }));
        if (r.version !== null) head.versions.push({ version: r.version, title: r.title! });
      }
      return [...heads.values()];
    });
  }

  head(name: string): Promise<AddonHead | undefined> {
    return guarded(() => headOf(this.db, name));
  }

  version(name: string, version: string): Promise<AddonVersion | undefined> {
    return guarded(() => versionOf(this.db, name, version));
  }

  settingsInputs(name: string, projectId: string | null, version: string | null): Promise<AddonSettingsInputs | undefined> {
    return guarded(async () => {
      const res = await this.db.raw<{
        rows: (Partial<VersionRow> & { production_version: string; pin: string | null; studio: Obj | null; project: Obj | null })[];
      }>(ADDON_SETTINGS_SQL, [name, name, projectId, projectId, version]);
      const r = res.rows[0];
      if (!r) return undefined;
      return {
        production_version: r.production_version,
        pin: r.pin,
        version: r.version ? toVersion(r as VersionRow) : undefined,
        studio: r.studio,
        project: r.project,
      };
    });
  }

  async change<R>(name: string, fn: (tx: AddonTx) => Promise<R>): Promise<R> {
    let tx: AddonTransaction | undefined;
    const out = await guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`schema:addon:${name}`]);
        tx = new AddonTransaction(trx, name, this.names);
        return fn(tx);
      }),
    );
    for (const e of tx?.events ?? []) this.committed(e);
    return out;
  }
}
