/**
 * The statements of share links (domain/share.links.ts). Every value is bound; timestamps leave
 * formatted by PostgreSQL (ISO 8601 UTC with microseconds) and expiry is judged on its clock.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { sqlIsoMicros } from '@reelbase/lib-platform';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { Db } from '../../kernel/store/knex.db.js';
import { COLUMNS, toStored, type Row } from '../../kernel/store/record.repository.js';
import type { NewShareLink, ShareLinkRow } from '../domain/shares.ports.js';

const LINK_COLUMNS = `id, playlist_id, token_digest, token_prefix, password_hash, ${sqlIsoMicros('expires_at')} as expires_at, can_comment,
  created_by, ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('revoked_at')} as revoked_at,
  coalesce(expires_at <= clock_timestamp(), false) as expired`;

interface LinkRow {
  id: string;
  playlist_id: string;
  token_digest: Buffer;
  token_prefix: string;
  password_hash: string | null;
  expires_at: string | null;
  can_comment: boolean;
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
  expired: boolean;
}

function toLink(r: LinkRow): ShareLinkRow {
  return {
    id: r.id,
    playlistId: r.playlist_id,
    tokenDigest: r.token_digest,
    tokenPrefix: r.token_prefix,
    passwordHash: r.password_hash,
    expiresAt: r.expires_at,
    canComment: r.can_comment,
    createdBy: r.created_by,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    expired: r.expired,
  };
}

async function links(db: Db, sql: string, params: readonly unknown[]): Promise<ShareLinkRow[]> {
  const res = await db.raw<{ rows: LinkRow[] }>(sql, params as Knex.RawBinding[]);
  return res.rows.map(toLink);
}

export class ShareRepository {
  constructor(private readonly db: Db) {}

  async insert(l: NewShareLink): Promise<ShareLinkRow> {
    const rows = await links(
      this.db,
      `insert into records.share_link (id, playlist_id, token_digest, token_prefix, password_hash, expires_at, can_comment, created_by)
        values (?, ?, ?, ?, ?, ?, ?, ?) returning ${LINK_COLUMNS}`,
      [l.id, l.playlistId, l.tokenDigest, l.tokenPrefix, l.passwordHash, l.expiresAt, l.canComment, l.createdBy],
    );
    return rows[0]!;
  }

  ofPlaylist(playlistId: string): Promise<ShareLinkRow[]> {
    return links(this.db, `select ${LINK_COLUMNS} from records.share_link where playlist_id = ? order by created_at desc, id desc`, [playlistId]);
  }

  async byDigest(digest: Buffer): Promise<ShareLinkRow | undefined> {
    return (await links(this.db, `select ${LINK_COLUMNS} from records.share_link where token_digest = ?`, [digest]))[0];
  }

  async byId(id: string): Promise<ShareLinkRow | undefined> {
    return (await links(this.db, `select ${LINK_COLUMNS} from records.share_link where id = ?`, [id]))[0];
  }

  async revoke(id: string): Promise<ShareLinkRow | undefined> {
    const sql = `update records.share_link set revoked_at = coalesce(revoked_at, clock_timestamp()) where id = ? returning ${LINK_COLUMNS}`;
    return (await links(this.db, sql, [id]))[0];
  }

  async findLive(ids: readonly string[]): Promise<StoredRecord[]> {
    if (ids.length === 0) return [];
    const res = await this.db.raw<{ rows: Row[] }>(`select ${COLUMNS} from records.record where id = any(?::uuid[]) and retired_at is null`, [ids as string[]]);
    return res.rows.map(toStored);
  }

  /** Notes linking any of the records (record_note_links_idx, one containment per id). */
  async notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]> {
    if (ids.length === 0) return [];
    const wanted = ids.map((id) => JSON.stringify([{ type, id }]));
    const res = await this.db.raw<{ rows: Row[] }>(
      `select ${COLUMNS} from records.record
        where entity_type = 'Note' and retired_at is null and data->'links' @> any(?::jsonb[])
        order by record.created_at, id`,
      [wanted],
    );
    return res.rows.map(toStored);
  }
}
