/**
 * Bodies and answers of share links and the guest routes (docs/api-notes.md, "Share links").
 */
import { sharePolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { RecordOut } from './record.schema.js';
import { BrandingOut } from './schema.schema.js';
import { Uuid } from './common.schema.js';

export const PlaylistPath = z.strictObject({ id: Uuid });

/** A share token (or, for DELETE /share/{token}, a link id); anything else is simply unknown (404). */
export const TokenPath = z.strictObject({ token: z.string().min(1).max(256) });

/** The review page's files. */
export const AssetPath = z.strictObject({ file: z.enum(['review.js', 'review.css']) });

export const ShareCreate = z
  .strictObject({
    expires_at: z.iso.datetime({ offset: true }).optional().describe('When the link stops working (ISO 8601, in the future); absent: never.'),
    can_comment: z.boolean().default(true).describe('Whether guests may post notes and verdicts.'),
    password: z
      .string()
      .min(1)
      .max(sharePolicy.SHARE_PASSWORD_MAX)
      .optional()
      .describe('Guests must send it in `x-share-password`; stored only as a scrypt hash.'),
  })
  .meta({ id: 'ShareCreate', description: 'Body of POST /playlists/{id}/share.' });

export const ShareCreated = z
  .object({
    id: z.string(),
    token: z.string().describe('256 random bits, base64url; shown once, only its SHA-256 digest is stored.'),
    url: z.string().describe('The review page of the link: `<PUBLIC_URL or the request origin>/review/<token>`.'),
    playlist_id: z.string(),
    expires_at: z.string().nullable(),
    can_comment: z.boolean(),
    has_password: z.boolean(),
  })
  .meta({ id: 'ShareCreated' });

export const ShareLinkOut = z
  .object({
    id: z.string(),
    playlist_id: z.string(),
    token_prefix: z.string().describe(`The first ${sharePolicy.TOKEN_PREFIX_CHARS} characters of the token (the token itself is not stored).`),
    expires_at: z.string().nullable(),
    can_comment: z.boolean(),
    has_password: z.boolean(),
    created_by: z.string().nullable(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'ShareLink' });

export const ShareLinkList = z.object({ items: z.array(ShareLinkOut) }).meta({ id: 'ShareLinkList', description: 'Newest first.' });

export const SharedVersionOut = z
  .object({
    id: z.string(),
    code: z.string(),
    status: z.string().nullable(),
    review_kind: z.string().nullable().describe('`video` or `image`; null while no reviewable has finished.'),
    review_media_key: z
      .string()
      .nullable()
      .describe(
        "The proxy, at `GET /media/{key}`: a guest's key (`sh/…/proxy.mp4` or `proxy.jpg`) bound to this link, served only while the link " +
          'is live and until `media_expires_at`; from the newest finished transcode of the version.',
      ),
    thumbnail_media_key: z.string().nullable().describe("The thumbnail (`sh/…/thumb.jpg`), a guest's key like `review_media_key`."),
    notes: z.array(RecordOut).describe('Live Notes linking the version, oldest first.'),
  })
  .meta({ id: 'SharedVersion' });

export const SharedOut = z
  .object({
    playlist: z.object({ id: z.string(), name: z.string() }),
    versions: z.array(SharedVersionOut),
    can_comment: z.boolean(),
    expires_at: z.string().nullable(),
    media_expires_at: z
      .string()
      .describe('When the media keys of this answer stop opening (`SHARE_MEDIA_KEY_SECONDS` after it); read `GET /shared/{token}` again for new ones.'),
    branding: BrandingOut,
  })
  .meta({ id: 'Shared', description: 'A shared playlist as a guest sees it.' });

export const GuestNoteBody = z
  .strictObject({
    version_id: Uuid,
    comment: z
      .string()
      .max(sharePolicy.COMMENT_MAX)
      .refine((s) => s.trim().length > 0, 'a comment cannot be empty'),
    verdict: z.enum(sharePolicy.VERDICTS).optional(),
    guest_name: z
      .string()
      .max(sharePolicy.GUEST_NAME_MAX)
      .refine((s) => s.trim().length > 0, 'a name cannot be empty'),
  })
  .meta({ id: 'GuestNote', description: 'Body of POST /shared/{token}/notes.' });
