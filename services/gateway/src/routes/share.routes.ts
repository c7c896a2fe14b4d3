/**
 * Share links and the guest routes (docs/review.md, docs/api-notes.md "Share links"): studio
 * staff create, list and revoke links of a playlist; a guest holding a link reads the playlist,
 * posts notes and verdicts, and opens the review page. Records keeps the links and writes the
 * notes; the gateway adds the branding, the per-link limits and the page's security headers.
 */
import { createHash } from 'node:crypto';
import { AppError, isAppError, type CallContext, type Logger } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type { Request, Response } from 'express';
import type { AuthedPrincipal } from '../domain/authed.principal.js';
import type { RateLimiter } from '../domain/rate.limiter.js';
import { defineRoute, Reply, type AnyRoute, type RawInput } from '../http/route.js';
import { recordObject } from '../mappers/record.mapper.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { RecordOut } from '../schemas/record.schema.js';
import {
  AssetPath,
  GuestNoteBody,
  PlaylistPath,
  ShareCreate,
  ShareCreated,
  ShareLinkList,
  ShareLinkOut,
  SharedOut,
  TokenPath,
} from '../schemas/share.schema.js';
import { REVIEW_CSP, reviewAssets } from '../review/review.assets.js';
import type { RouteDeps } from './route.deps.js';

const TAGS = ['share'];
const MANAGERS: ReadonlySet<string> = new Set(['Admin', 'Supervisor', 'Coordinator']);
export const SHARE_PASSWORD_HEADER = 'x-share-password';

/** 403 unless the caller is an Admin, Supervisor or Coordinator (before the body is read). */
function assertManager(p: AuthedPrincipal): void {
  if (!MANAGERS.has(p.role)) throw new AppError('forbidden', 'only an Admin, Supervisor or Coordinator may manage share links');
}

/** The key of a link in the per-link limiters: a digest, so the token is not held as such. */
const linkKey = (token: string) => createHash('sha256').update(token).digest('base64url');

/** The password header, when sent once. */
function passwordOf(req: Request): string | undefined {
  const v = req.headers[SHARE_PASSWORD_HEADER];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** A guest's answers are private to the link holder: never cached, never sent as a referrer. */
function guestHeaders(res: Response): void {
  res.setHeader('cache-control', 'no-store');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-content-type-options', 'nosniff');
}

function shareLinkJson(l: recordsv1.ShareLink) {
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

const NO_BRANDING = { studio_name: null, logo_media_key: null, primary_color: null, accent_color: null };

export interface ShareRouteOptions {
  /** Guest notes per link (SHARE_NOTES_PER_MINUTE); unset: not limited. */
  notesLimiter?: RateLimiter;
  /** Wrong or missing passwords per link (SHARE_PASSWORD_FAILURES_PER_MINUTE); unset: not limited. */
  passwordFailures?: RateLimiter;
  /** PUBLIC_URL: the origin of the `url` of new links; unset: the request's scheme and Host. */
  publicUrl?: string;
  logger?: Logger;
}

export function shareRoutes({ peers, share }: RouteDeps): AnyRoute[] {
  const { notesLimiter, passwordFailures, publicUrl, logger } = share ?? {};
  const origin = (req: Request) => (publicUrl ? publicUrl.replace(/\/+$/, '') : `${req.protocol}://${req.get('host') ?? 'localhost'}`);

  /** The studio's branding; the page still works without it, so a schema outage gives none (logged). */
  const branding = async (ctx: CallContext): Promise<unknown> => {
    try {
      const res = await peers.schema.getBranding({ bodyJson: '', code: '', subCode: '', entityCode: '' }, ctx);
      return { ...NO_BRANDING, ...(JSON.parse(res.json || '{}') as object) };
    } catch (err) {
      logger?.warn({ err, request_id: ctx.requestId }, 'branding unavailable; the shared playlist is answered without it');
      return NO_BRANDING;
    }
  };

  /** 429 while the link has used up its password attempts. */
  const checkPasswordBudget = (key: string): void => {
    const wait = passwordFailures?.peek(key) ?? 0;
    if (wait > 0) throw new AppError('rate_limited', 'too many wrong passwords for this share link', { retryAfter: Math.ceil(wait) });
  };

  /** Runs a guest call; a refused password counts against the link. */
  const guestCall = async <T>(token: string, call: () => Promise<T>): Promise<T> => {
    const key = linkKey(token);
    checkPasswordBudget(key);
    try {
      return await call();
    } catch (err) {
      if (isAppError(err) && err.code === 'password_required') passwordFailures?.take(key);
      throw err;
    }
  };

  /** Per-link note budget, before the body is validated (429 with Retry-After). */
  const limitNotes = async (_ctx: CallContext, raw: RawInput): Promise<void> => {
    const wait = notesLimiter?.take(linkKey(raw.params.token ?? '')) ?? 0;
    if (wait > 0) throw new AppError('rate_limited', 'too many notes on this share link; try again shortly', { retryAfter: Math.ceil(wait) });
  };

  const guestCtx = (ctx: CallContext): CallContext => ({ requestId: ctx.requestId, principal: { userId: '', role: 'Guest', authKind: 'guest' } });

  return [
    defineRoute({
      method: 'post',
      path: '/playlists/{id}/share',
      operationId: 'createShareLink',
      summary: 'Share a playlist with guests (Admin, Supervisor, Coordinator).',
      description:
        'Creates a link to the review page of the playlist. The token (256 random bits) is answered once: only its SHA-256 ' +
        'digest is stored. A password is stored as a scrypt hash; guests send it in `x-share-password`. Other roles: 403; ' +
        'an unknown or retired playlist: 404; `expires_at` in the past: 422.',
      tags: TAGS,
      auth: 'bearer',
      authorize: assertManager,
      params: PlaylistPath,
      body: ShareCreate,
      responses: { 200: { description: 'The new link.', schema: ShareCreated } },
      errors: [404, 503],
      handler: async ({ params, body, ctx, req, res }) => {
        const out = await peers.records.createShareLink(
          { playlistId: params.id, expiresAt: body.expires_at, canComment: body.can_comment, password: body.password },
          ctx,
        );
        const link = out.link!;
        res.setHeader('cache-control', 'no-store');
        return Reply.json({
          id: link.id,
          token: out.token,
          url: `${origin(req)}/review/${out.token}`,
          playlist_id: link.playlistId,
          expires_at: link.expiresAt ?? null,
          can_comment: link.canComment,
          has_password: link.hasPassword,
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/playlists/{id}/share',
      operationId: 'listShareLinks',
      summary: "A playlist's share links (Admin, Supervisor, Coordinator).",
      description: 'Newest first, revoked and expired ones included. Tokens are not stored, so each link shows `token_prefix`.',
      tags: TAGS,
      auth: 'bearer',
      authorize: assertManager,
      params: PlaylistPath,
      responses: { 200: { description: 'The links.', schema: ShareLinkList } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => {
        const out = await peers.records.listShareLinks({ playlistId: params.id }, ctx);
        return Reply.json({ items: out.links.map(shareLinkJson) });
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/share/{token}',
      operationId: 'revokeShareLink',
      summary: 'Revoke a share link (Admin, Supervisor, Coordinator).',
      description:
        'Takes the token, or the link `id` as listed. Effective at once: the next guest request with the token is 404. ' +
        'Revoking twice keeps the first `revoked_at`. Unknown: 404.',
      tags: TAGS,
      auth: 'bearer',
      authorize: assertManager,
      params: TokenPath,
      responses: { 200: { description: 'The revoked link.', schema: ShareLinkOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => {
        const out = await peers.records.revokeShareLink({ token: params.token }, ctx);
        return Reply.json(shareLinkJson(out.link!));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/shared/{token}',
      operationId: 'openShare',
      summary: 'A shared playlist as a guest sees it (public).',
      description:
        'The playlist, its live versions (in playlist order) with the latest finished reviewable and their notes (oldest first), ' +
        '`can_comment`, `expires_at` and the studio branding. A link with a password needs it in `x-share-password` (missing or ' +
        'wrong: 401 `password_required`; after `SHARE_PASSWORD_FAILURES_PER_MINUTE` wrong ones the link answers 429 for a while). ' +
        'Unknown, revoked or expired: 404.',
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      params: TokenPath,
      headerParams: [{ name: SHARE_PASSWORD_HEADER, description: "The link's password, when it has one." }],
      responses: { 200: { description: 'The shared playlist.', schema: SharedOut }, 401: { description: '`password_required`.', schema: ErrorBody } },
      errors: [404, 429, 503],
      handler: async ({ params, ctx, req, res }) => {
        guestHeaders(res);
        const opened = await guestCall(params.token, () => peers.records.openShare({ token: params.token, password: passwordOf(req) }, guestCtx(ctx)));
        return Reply.json({
          playlist: { id: opened.playlistId, name: opened.playlistName },
          versions: opened.versions.map((v) => ({
            id: v.id,
            code: v.code,
            status: v.status ?? null,
            review_kind: v.reviewKind ?? null,
            review_media_key: v.reviewMediaKey ?? null,
            thumbnail_media_key: v.thumbnailMediaKey ?? null,
            notes: v.notes.map(recordObject),
          })),
          can_comment: opened.canComment,
          expires_at: opened.expiresAt ?? null,
          branding: await branding(ctx),
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/shared/{token}/notes',
      operationId: 'createGuestNote',
      summary: 'A guest posts a note and a verdict on one shared version (public).',
      description:
        'Creates a Note linked to the version (`author` empty, `guest_name` set, `content` = the comment, `verdict` when given), ' +
        'written like any Note: its event is in the log and on the WebSocket and it is listed by ' +
        '`GET /entities/Version/{id}/notes`. A version outside the playlist, or a link without `can_comment`: 403; a bad ' +
        'verdict: 422; a password as for GET. Each link takes at most `SHARE_NOTES_PER_MINUTE` notes a minute (429 with ' +
        '`Retry-After`, counted before the body is read).',
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      authorizeAnonymous: limitNotes,
      params: TokenPath,
      body: GuestNoteBody,
      headerParams: [{ name: SHARE_PASSWORD_HEADER, description: "The link's password, when it has one." }],
      responses: { 200: { description: 'The Note.', schema: RecordOut }, 401: { description: '`password_required`.', schema: ErrorBody } },
      errors: [403, 404, 429, 503],
      handler: async ({ params, body, ctx, req, res }) => {
        guestHeaders(res);
        const out = await guestCall(params.token, () =>
          peers.records.createGuestNote(
            {
              token: params.token,
              password: passwordOf(req),
              versionId: body.version_id,
              comment: body.comment,
              verdict: body.verdict,
              guestName: body.guest_name,
            },
            guestCtx(ctx),
          ),
        );
        return Reply.json(recordObject(out.note!));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/review/{token}',
      operationId: 'reviewPage',
      summary: 'The review page of a share link (public HTML).',
      description:
        'A plain page (no inline script or style) that reads `GET /shared/{token}` and posts to `POST /shared/{token}/notes`. ' +
        `Served with \`Content-Security-Policy: ${REVIEW_CSP}\`, \`X-Content-Type-Options: nosniff\`, ` +
        '`Referrer-Policy: no-referrer` (the token is in the URL) and `Cache-Control: no-store`. The page is the same for any ' +
        'token; whether the link works is told by the API call it makes.',
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      params: TokenPath,
      responses: { 200: { description: 'The page.', contentType: 'text/html' } },
      errors: [503],
      handler: ({ res }) => {
        const assets = reviewAssets();
        guestHeaders(res);
        res.setHeader('content-security-policy', REVIEW_CSP);
        res.setHeader('x-frame-options', 'DENY');
        return Reply.text(assets.html, 'text/html; charset=utf-8');
      },
    }),
    defineRoute({
      method: 'get',
      path: '/review-assets/{file}',
      operationId: 'reviewAsset',
      summary: "The review page's script and style sheet (public).",
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      params: AssetPath,
      responses: { 200: { description: 'The file.', contentType: 'text/javascript' } },
      errors: [404, 503],
      handler: ({ params, res }) => {
        const assets = reviewAssets();
        const file = assets.files.get(params.file);
        if (!file) throw AppError.notFound(`no review asset ${params.file}`);
        res.setHeader('x-content-type-options', 'nosniff');
        res.setHeader('cache-control', 'no-cache');
        res.setHeader('content-security-policy', REVIEW_CSP);
        return Reply.text(file.body, file.contentType);
      },
    }),
  ];
}
