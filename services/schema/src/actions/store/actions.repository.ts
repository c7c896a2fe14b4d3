/**
 * The {@link ActionStore} on PostgreSQL (schema `schema`, migration schema-0002-actions): the
 * studio's custom actions (one row each, in `position` order; a secret sealed with lib-platform's
 * SecretCipher under SECRETS_KEY, bound to its action's id, so the column never holds it in clear)
 * and the one-time launch requests (the sha256 of the token, the user, the payload and the expiry
 * by the database clock). Events go to the schema outbox in the same transaction as the change.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { SecretCipher, guarded, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import type { ActionStore, NewLaunch } from '../domain/actions.ports.js';
import type { CustomAction, LaunchPayload } from '../domain/actions.rules.js';
import { appendSchemaEvent } from '../../kernel/store/schema.outbox.js';

type Db = Knex | Knex.Transaction;

/** The SecretCipher context of a custom action's secret. */
const secretContext = (actionId: string) => `schema.custom_action:${actionId}`;

interface ActionRow {
  id: string;
  label: string;
  url: string;
  entity_types: string[];
  roles: string[] | null;
  icon: string | null;
  secret: string | null;
}

export class ActionRepository implements ActionStore {
  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
    private readonly cipher: SecretCipher,
    /** Called with each event once it committed (wakes the outbox relay). */
    private readonly committed: (e: StreamEvent) => void = () => {},
  ) {}

  private async append(trx: Db, e: StreamEvent): Promise<void> {
    await appendSchemaEvent(trx as Knex, this.names, e);
  }

  private async rows(db: Db): Promise<ActionRow[]> {
    const res = await db.raw<{ rows: ActionRow[] }>('select id, label, url, entity_types, roles, icon, secret from schema.custom_action order by position, id');
    return res.rows;
  }

  private opened(r: ActionRow): CustomAction {
    return {
      id: r.id,
      label: r.label,
      url: r.url,
      entity_types: r.entity_types,
      roles: r.roles,
      icon: r.icon,
      secret: r.secret === null ? null : this.cipher.open(r.secret, secretContext(r.id)),
    };
  }

  /**
   * Seals again every secret sealed with an earlier SECRETS_KEY (still opened through
   * SECRETS_KEY_PREVIOUS); returns how many. A row changes only if nobody changed it meanwhile.
   */
  sealStored(): Promise<number> {
    return guarded(async () => {
      let sealed = 0;
      for (const r of await this.rows(this.db)) {
        if (r.secret === null || this.cipher.isCurrent(r.secret)) continue;
        const value = this.cipher.seal(this.cipher.open(r.secret, secretContext(r.id)), secretContext(r.id));
        const res = await this.db.raw<{ rowCount: number }>('update schema.custom_action set secret = ? where id = ? and secret = ?', [value, r.id, r.secret]);
        sealed += res.rowCount;
      }
      return sealed;
    });
  }

  customActions(): Promise<CustomAction[]> {
    return guarded(async () => (await this.rows(this.db)).map((r) => this.opened(r)));
  }

  replaceCustomActions(
    actions: Array<Omit<CustomAction, 'secret'> & { secret: string | null | undefined }>,
    event: (stored: CustomAction[]) => StreamEvent,
  ): Promise<CustomAction[]> {
    return guarded(async () => {
      const out = await this.db.transaction(async (trx) => {
        // One change of the list at a time, so a kept secret is the one the list had.
        await trx.raw("select pg_advisory_xact_lock(hashtext('schema:custom_action'))");
        const before = new Map((await this.rows(trx)).map((r) => [r.id, r]));
        const stored: CustomAction[] = [];
        await trx.raw('delete from schema.custom_action');
        for (const [position, a] of actions.entries()) {
          const kept = a.secret === undefined ? (before.get(a.id)?.secret ?? null) : null;
          const sealed = a.secret === undefined ? kept : a.secret === null ? null : this.cipher.seal(a.secret, secretContext(a.id));
          await trx.raw(
            `insert into schema.custom_action (id, position, label, url, entity_types, roles, icon, secret)
             values (?, ?, ?, ?, ?::text[], ?::text[], ?, ?)`,
            [a.id, position, a.label, a.url, a.entity_types, a.roles, a.icon, sealed] as unknown as Knex.RawBinding[],
          );
          stored.push(this.opened({ ...a, secret: sealed }));
        }
        const e = event(stored);
        await this.append(trx, e);
        return { stored, e };
      });
      this.committed(out.e);
      return out.stored;
    });
  }

  createLaunch(launch: NewLaunch, event: StreamEvent): Promise<string> {
    return guarded(async () => {
      const expiresAt = await this.db.transaction(async (trx) => {
        // Requests past their expiry are never answered again: drop them as new ones come.
        await trx.raw('delete from schema.launch_request where expires_at <= now()');
        const res = await trx.raw<{ rows: { expires_at: string }[] }>(
          `insert into schema.launch_request (token_hash, id, user_id, payload, expires_at)
           values (?, ?, ?, ?::jsonb, now() + ? * interval '1 millisecond')
           returning to_char(expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as expires_at`,
          [launch.tokenHash, launch.id, launch.userId, JSON.stringify(launch.payload), launch.ttlMs],
        );
        await this.append(trx, event);
        return res.rows[0]!.expires_at;
      });
      this.committed(event);
      return expiresAt;
    });
  }

  takeLaunch(tokenHash: string, userId: string): Promise<LaunchPayload | null> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { payload: LaunchPayload }[] }>(
        `delete from schema.launch_request where token_hash = ? and user_id = ? and expires_at > now() returning payload`,
        [tokenHash, userId],
      );
      return res.rows[0]?.payload ?? null;
    });
  }

  recordEvent(event: StreamEvent): Promise<void> {
    return guarded(async () => {
      await this.db.transaction((trx) => this.append(trx, event));
      this.committed(event);
    });
  }
}
