/**
 * The shares module's adapter on PostgreSQL: implements ShareLinkStore (shares.ports.ts) with the
 * statements of share.repository.ts, every method inside `guarded`.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { RecordsPools } from '../../kernel/store/knex.db.js';
import { RecordRepository } from '../../kernel/store/record.repository.js';
import type { NewShareLink, ShareLinkRow, ShareLinkStore } from '../domain/shares.ports.js';
import { ShareRepository } from './share.repository.js';

export class KnexShareLinkStore implements ShareLinkStore {
  /** Reads, on the reads pool; writes go through `db` (the writes pool). */
  private readonly records: RecordRepository;
  private readonly shares: ShareRepository;
  private readonly db: Knex;

  constructor(pools: RecordsPools) {
    this.db = pools.writes;
    this.records = new RecordRepository(pools.reads);
    this.shares = new ShareRepository(pools.reads);
  }

  find(id: string, reader?: string | null): Promise<StoredRecord | undefined> {
    return guarded(() => this.records.find(id, false, reader));
  }

  findLive(ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.findLive(ids));
  }

  notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.notesLinkingAny(type, ids));
  }

  /**
   * The link is inserted holding a key-share lock on its Playlist's row, so a change of the
   * Playlist's `versions` in flight (which holds the row for update) either commits before the
   * link exists or waits and then sees it (docs/api-notes.md, "Roles and who may write").
   */
  insertShareLink(link: NewShareLink): Promise<ShareLinkRow> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw('select 1 from records.record where id = ? for key share', [link.playlistId]);
        return new ShareRepository(trx).insert(link);
      }),
    );
  }

  shareLinksOf(playlistId: string): Promise<ShareLinkRow[]> {
    return guarded(() => this.shares.ofPlaylist(playlistId));
  }

  shareLinkByDigest(digest: Buffer): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byDigest(digest));
  }

  shareLinkById(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byId(id));
  }

  revokeShareLink(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => new ShareRepository(this.db).revoke(id));
  }
}
