/**
 * The one statement the core module runs on the shares module's table: whether a Playlist has a
 * live share link, which decides who may change its `versions` (docs/api-notes.md, "Roles and who
 * may write"). The shares module owns `records.share_link` (docs/architecture.md, "The records
 * modules").
 */
import type { Db } from '../../kernel/store/knex.db.js';

/** True when the playlist has a link neither revoked nor expired (on the database's clock). */
export async function hasLiveShareLink(db: Db, playlistId: string): Promise<boolean> {
  const res = await db.raw<{ rows: unknown[] }>(
    `select 1 from records.share_link
      where playlist_id = ? and revoked_at is null and (expires_at is null or expires_at > clock_timestamp()) limit 1`,
    [playlistId],
  );
  return res.rows.length > 0;
}
