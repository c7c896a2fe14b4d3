/**
 * What share links need from storage, and the rows they carry; store/share.repository.ts.
 */
import type { StoredRecord } from '../../kernel/domain/record.ports.js';

/** What share links need from storage; store/share.repository.ts via KnexRecordStore. */
export interface ShareLinkStore {
  /** The row with `id`, retired or not; none when `reader` (membershipOf's user) may not read it. */
  find(id: string, reader?: string | null): Promise<StoredRecord | undefined>;
  /** Live records among `ids` (any order). */
  findLive(ids: readonly string[]): Promise<StoredRecord[]>;
  /** Live Notes whose `links` name any of the records `type`/`ids`, oldest first. */
  notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]>;
  insertShareLink(link: NewShareLink): Promise<ShareLinkRow>;
  /** Links of a playlist, newest first. */
  shareLinksOf(playlistId: string): Promise<ShareLinkRow[]>;
  shareLinkByDigest(digest: Buffer): Promise<ShareLinkRow | undefined>;
  shareLinkById(id: string): Promise<ShareLinkRow | undefined>;
  /** Sets `revoked_at` once (a second revoke keeps the first time). */
  revokeShareLink(id: string): Promise<ShareLinkRow | undefined>;
}

/** A stored link; the token itself is never stored. */
export interface ShareLinkRow {
  id: string;
  playlistId: string;
  tokenDigest: Buffer;
  tokenPrefix: string;
  passwordHash: string | null;
  expiresAt: string | null;
  canComment: boolean;
  createdBy: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** `expires_at <= now()` on the database's clock. */
  expired: boolean;
}

export interface NewShareLink {
  id: string;
  playlistId: string;
  tokenDigest: Buffer;
  tokenPrefix: string;
  passwordHash: string | null;
  expiresAt: string | null;
  canComment: boolean;
  createdBy: string | null;
}
