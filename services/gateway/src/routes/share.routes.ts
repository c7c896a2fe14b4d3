/**
 * Share links and the guest routes (docs/review.md, docs/api-notes.md "Share links"): studio
 * staff create, list and revoke links of a playlist; a guest holding a link reads the playlist,
 * posts notes and verdicts, and opens the review page. Records keeps the links and writes the
 * notes; the gateway adds the branding, the per-link limits and the page's security headers.
 */
import { createHash } from 'node:crypto';
import { AppError, isAppError, sharePolicy, type CallContext, type Logger } from '@reelbase/lib-platform';
import type { Request, Response } from 'express';
import { guestContext, type GuestSecrets } from '../domain/guest.secrets.js';
import type { RateLimiter } from '../domain/rate.limiter.js';
import { defineRoute, Reply, type AnyRoute, type RawInput } from '../http/route.js';
import { recordObject } from '../mappers/record.mapper.js';
import {
  createShareLinkRequest,
  guestNoteRequest,
  shareCreatedJson,
  sharedJson,
  shareLinkJson,
  type GuestMedia,
  type GuestProof,
} from '../mappers/share.mapper.js';
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
import { MANAGERS } from './route.roles.js';

const TAGS = ['share'];
export const SHARE_PASSWORD_HEADER = 'x-share-password';
export const SHARE_SESSION_HEADER = 'x-share-session';

/** Links are managed by an Admin, Supervisor or Coordinator (403 before the body is read). */
const LINK_MANAGER = { roles: MANAGERS, to: 'manage share links' };

/** The key of a link in the per-link limiters: a digest, so the token is not held as such. */
const linkKey = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A guest header, when sent once and not empty. */
function headerOf(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** The headers a guest proves a link's password with. */
const GUEST_HEADERS = [
  { name: SHARE_PASSWORD_HEADER, description: "The link's password, when it has one." },
  {
    name: SHARE_SESSION_HEADER,
    description: 'A guest session answered by `GET /shared/{token}` after a correct password: taken instead of the password until it expires.',
  },
];

/** A guest's answers are private to the link holder: never cached, never sent as a referrer. */
function guestHeaders(res: Response): void {
  res.setHeader('cache-control', 'no-store');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-content-type-options', 'nosniff');
}

const NO_BRANDING = { studio_name: null, logo_media_key: null, primary_color: null, accent_color: null };

/** Defaults of the two lifetimes (config.ts has the same). */
const MEDIA_KEY_SECONDS = 4 * 3600;
const SESSION_SECONDS = 30 * 60;

export function shareRoutes({ peers, share }: RouteDeps): AnyRoute[] {
  const { notesLimiter, passwordFailures, publicUrl, logger, secrets } = share ?? {};
  const mediaKeySeconds = share?.mediaKeySeconds ?? MEDIA_KEY_SECONDS;
  const sessionSeconds = share?.sessionSeconds ?? SESSION_SECONDS;
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

  const rateLimited = (wait: number) =>
    new AppError('rate_limited', 'too many wrong passwords for this share link', { retryAfter: Math.max(1, Math.ceil(wait)) });

  /**
   * Runs a guest call with the link's proof (docs/review.md, "Passwords"):
   * - a genuine, unexpired session (`x-share-session`) stands in for the password: no scrypt, no
   *   budget (records still checks that the link is live and that the session is this link's);
   * - a password is charged to the link's budget before it is verified (429 once it is spent, so
   *   parallel guesses cannot all pass a check made before any of them failed) and refunded when
   *   it was not refused (right, or the link needed none, or records did not get to verify it);
   * - no proof: a `password_required` answer is charged after the fact (it cost no scrypt).
   */
  const guestCall = async <T>(token: string, req: Request, call: (proof: GuestProof) => Promise<T>): Promise<T> => {
    const key = linkKey(token);
    const sessionLinkId = secrets?.openSession(headerOf(req, SHARE_SESSION_HEADER));
    const password = headerOf(req, SHARE_PASSWORD_HEADER);
    if (sessionLinkId !== undefined || password === undefined) {
      // Without a session, a link whose budget is spent answers 429 before anything is asked.
      const wait = sessionLinkId === undefined ? (passwordFailures?.peek(key) ?? 0) : 0;
      if (wait > 0) throw rateLimited(wait);
      try {
        return await call(sessionLinkId === undefined ? {} : { sessionLinkId, password });
      } catch (err) {
        // No proof, or a session of another link: it counts like a missing password.
        if (isAppError(err) && err.code === 'password_required') passwordFailures?.take(key);
        throw err;
      }
    }
    const wait = passwordFailures?.take(key) ?? 0;
    if (wait > 0) throw rateLimited(wait);
    let refused = false;
    try {
      return await call({ password });
    } catch (err) {
      refused = isAppError(err) && err.code === 'password_required';
      throw err;
    } finally {
      if (!refused) passwordFailures?.refund(key);
    }
  };

  /** A guest key for each finished output of the shared versions, from media-transcode's own jobs. */
  const guestMedia = async (linkId: string, versionIds: string[], ctx: CallContext) => {
    const media = new Map<string, GuestMedia>();
    if (!secrets || versionIds.length === 0 || !peers.media) return media;
    try {
      const { outputs } = await peers.media.finishedOutputs({ versionIds }, ctx);
      for (const o of outputs) {
        media.set(o.versionId, {
          kind: o.reviewKind,
          proxy: secrets.mediaKey(linkId, o.proxyKey, mediaKeySeconds),
          thumbnail: secrets.mediaKey(linkId, o.thumbnailKey, mediaKeySeconds),
        });
      }
    } catch (err) {
      // The playlist and its notes still show; the page says nothing has finished transcoding.
      logger?.warn({ err, request_id: ctx.requestId }, 'media-transcode unavailable; the shared playlist is answered without media');
    }
    return media;
  };

  /** Per-link note budget, before the body is validated (429 with Retry-After). */
  const limitNotes = async (_ctx: CallContext, raw: RawInput): Promise<void> => {
    const wait = notesLimiter?.take(linkKey(raw.params.token ?? '')) ?? 0;
    if (wait > 0) throw new AppError('rate_limited', 'too many notes on this share link; try again shortly', { retryAfter: Math.ceil(wait) });
  };

  return [
    defineRoute({
      method: 'post',
      path: '/playlists/{id}/share',
      // The answer holds a credential: never stored, so never replayed.
      replayable: false,
      operationId: 'createShareLink',
      summary: 'Share a playlist with guests (Admin, Supervisor, Coordinator).',
      description:
        'Creates a link to the review page of the playlist. The token (256 random bits) is answered once: only its SHA-256 ' +
        'digest is stored. A password is stored as a scrypt hash; guests send it in `x-share-password`. Other roles: 403; ' +
        'an unknown or retired playlist: 404; `expires_at` in the past: 422.',
      tags: TAGS,
      auth: 'bearer',
      allow: LINK_MANAGER,
      params: PlaylistPath,
      body: ShareCreate,
      responses: { 200: { description: 'The new link.', schema: ShareCreated } },
      errors: [404, 503],
      handler: async ({ params, body, ctx, req, res }) => {
        const out = await peers.records.createShareLink(createShareLinkRequest(params.id, body), ctx);
        res.setHeader('cache-control', 'no-store');
        return Reply.json(shareCreatedJson(out, `${origin(req)}/review/${out.token}`));
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
      allow: LINK_MANAGER,
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
      allow: LINK_MANAGER,
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
        '`can_comment`, `expires_at` and the studio branding. The media keys are guest keys bound to this link (`sh/…`), ' +
        'opening at `GET /media/{key}` while the link is live and until `media_expires_at`; they are taken from the media ' +
        "service's finished transcodes. A link with a password needs it in `x-share-password` (missing or wrong: 401 " +
        '`password_required`), or the session a correct password was answered with (`x-share-session`, valid ' +
        '`SHARE_SESSION_SECONDS`). Each password sent is charged to the link before it is verified and refunded unless it ' +
        'was wrong: after `SHARE_PASSWORD_FAILURES_PER_MINUTE` wrong or missing ones the link answers 429 with `Retry-After` ' +
        `for a while, and at most ${sharePolicy.MAX_VERIFYING_PER_LINK} verifications of one link run at once (more: 429). Sessions are not limited by that ` +
        'budget. Unknown, revoked or expired: 404.',
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      params: TokenPath,
      headerParams: GUEST_HEADERS,
      responses: {
        200: {
          description:
            'The shared playlist. When a correct `x-share-password` was sent, the answer carries a guest session in the ' +
            '`x-share-session` header (and its expiry in `x-share-session-expires`): send it instead of the password.',
          schema: SharedOut,
        },
        401: { description: '`password_required`.', schema: ErrorBody },
      },
      errors: [404, 429, 503],
      handler: async ({ params, ctx, req, res }) => {
        guestHeaders(res);
        const gctx = guestContext(ctx);
        let usedPassword = false;
        const opened = await guestCall(params.token, req, (proof) => {
          usedPassword = proof.sessionLinkId === undefined && proof.password !== undefined;
          return peers.records.openShare({ token: params.token, ...proof }, gctx);
        });
        if (usedPassword && opened.hasPassword && secrets) {
          const session = secrets.session(opened.linkId, sessionSeconds);
          res.setHeader(SHARE_SESSION_HEADER, session.token);
          res.setHeader('x-share-session-expires', session.expiresAt);
        }
        const mediaExpiresAt = new Date(Math.floor(Date.now() / 1000 + mediaKeySeconds) * 1000).toISOString();
        const [media, brand] = await Promise.all([
          guestMedia(
            opened.linkId,
            opened.versions.map((v) => v.id),
            gctx,
          ),
          branding(ctx),
        ]);
        return Reply.json(sharedJson(opened, media, mediaExpiresAt, brand));
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
        'verdict: 422; a password or session as for GET. Each link takes at most `SHARE_NOTES_PER_MINUTE` notes a minute (429 with ' +
        '`Retry-After`, counted before the body is read).',
      tags: TAGS,
      auth: 'public',
      rateLimited: false,
      authorizeAnonymous: limitNotes,
      params: TokenPath,
      body: GuestNoteBody,
      headerParams: GUEST_HEADERS,
      responses: { 200: { description: 'The Note.', schema: RecordOut }, 401: { description: '`password_required`.', schema: ErrorBody } },
      errors: [403, 404, 429, 503],
      handler: async ({ params, body, ctx, req, res }) => {
        guestHeaders(res);
        const out = await guestCall(params.token, req, (proof) =>
          peers.records.createGuestNote(guestNoteRequest(params.token, proof, body), guestContext(ctx)),
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
