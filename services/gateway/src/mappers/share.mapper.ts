/**
 * Share links and the guest routes' messages (docs/api-notes.md, "Share links"; docs/review.md):
 * bodies → records' share requests, links and shared playlists → their client form.
 */
import type { recordsv1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { GuestNoteBody, ShareCreate } from '../schemas/share.schema.js';
import { recordObject } from './record.mapper.js';

/** What a guest proves a link's password with (a session stands in for the password). */
export interface GuestProof {
  password?: string;
  sessionLinkId?: string;
}

/** The guest media of one shared version: its kind and the guest keys of its proxy and thumbnail. */
export interface GuestMedia {
  kind: string;
  proxy?: string;
  thumbnail?: string;
}

/** POST /playlists/{id}/share → CreateShareLink. */
export function createShareLinkRequest(playlistId: string, body: z.output<typeof ShareCreate>): recordsv1.CreateShareLinkRequest {
  return { playlistId, expiresAt: body.expires_at, canComment: body.can_comment, password: body.password };
}

/** POST /shared/{token}/notes → CreateGuestNote. */
export function guestNoteRequest(token: string, proof: GuestProof, body: z.output<typeof GuestNoteBody>): recordsv1.CreateGuestNoteRequest {
  return { token, ...proof, versionId: body.version_id, comment: body.comment, verdict: body.verdict, guestName: body.guest_name };
}

/** A link as listed (`ShareLink`): its token is not stored, only `token_prefix`. */
export function shareLinkJson(l: recordsv1.ShareLink) {
  return {
    id: l.id,
    playlist_id: l.playlistId,
    token_prefix: l.tokenPrefix,
    expires_at: l.expiresAt ?? null,
    can_comment: l.canComment,
    has_password: l.hasPassword,
    created_by: l.createdBy ?? null,
    created_at: l.createdAt,
    revoked_at: l.revokedAt ?? null,
  };
}

/** A new link with its token, shown once (`ShareCreated`); `url` is its review page. */
export function shareCreatedJson(out: recordsv1.CreateShareLinkResponse, url: string) {
  const link = out.link!;
  return {
    id: link.id,
    token: out.token,
    url,
    playlist_id: link.playlistId,
    expires_at: link.expiresAt ?? null,
    can_comment: link.canComment,
    has_password: link.hasPassword,
  };
}

/** A shared playlist as a guest sees it (`Shared`): each version with its guest media and notes. */
export function sharedJson(opened: recordsv1.OpenShareResponse, media: ReadonlyMap<string, GuestMedia>, mediaExpiresAt: string, branding: unknown) {
  return {
    playlist: { id: opened.playlistId, name: opened.playlistName },
    versions: opened.versions.map((v) => {
      const m = media.get(v.id);
      return {
        id: v.id,
        code: v.code,
        status: v.status ?? null,
        review_kind: m?.kind ?? null,
        review_media_key: m?.proxy ?? null,
        thumbnail_media_key: m?.thumbnail ?? null,
        notes: v.notes.map(recordObject),
      };
    }),
    can_comment: opened.canComment,
    expires_at: opened.expiresAt ?? null,
    media_expires_at: mediaExpiresAt,
    branding,
  };
}
