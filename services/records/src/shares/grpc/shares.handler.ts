/**
 * The share link calls of reelbase.records.v1.RecordsService (the rest are the core module's:
 * core/grpc/records.handler.ts): proto messages ↔ domain calls, nothing more.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import { toProtoRecord, type ShareLinkCalls } from '../../kernel/grpc/record.proto.js';
import type { ShareLinks } from '../domain/share.links.js';
import type { ShareLinkRow } from '../domain/shares.ports.js';

/** A stored share link as a proto message (never its digest or password hash). */
function toProtoShareLink(l: ShareLinkRow): recordsv1.ShareLink {
  return {
    id: l.id,
    playlistId: l.playlistId,
    tokenPrefix: l.tokenPrefix,
    expiresAt: l.expiresAt ?? undefined,
    canComment: l.canComment,
    hasPassword: l.passwordHash !== null,
    createdBy: l.createdBy ?? undefined,
    createdAt: l.createdAt,
    revokedAt: l.revokedAt ?? undefined,
  };
}

/** The share link calls of the records service, registered with the core module's under RECORDS_SERVICE_NAME. */
export type ShareLinkHandlers = Pick<UnaryHandlers<recordsv1.RecordsServiceServer>, ShareLinkCalls>;

export function shareLinkHandlers({ shares }: { shares: ShareLinks }): ShareLinkHandlers {
  return {
    async createShareLink(req: recordsv1.CreateShareLinkRequest, ctx: CallContext) {
      const { link, token } = await shares.create(
        { playlistId: req.playlistId, expiresAt: req.expiresAt, canComment: req.canComment, password: req.password },
        ctx,
      );
      return { link: toProtoShareLink(link), token };
    },

    async listShareLinks(req: recordsv1.ListShareLinksRequest, ctx: CallContext) {
      return { links: (await shares.list(req.playlistId, ctx)).map(toProtoShareLink) };
    },

    async revokeShareLink(req: recordsv1.RevokeShareLinkRequest, ctx: CallContext) {
      return { link: toProtoShareLink(await shares.revoke(req.token, ctx)) };
    },

    async openShare(req: recordsv1.OpenShareRequest) {
      const opened = await shares.open(req.token, { password: req.password, sessionLinkId: req.sessionLinkId });
      return {
        linkId: opened.linkId,
        hasPassword: opened.hasPassword,
        playlistId: opened.playlistId,
        playlistName: opened.playlistName,
        canComment: opened.canComment,
        expiresAt: opened.expiresAt ?? undefined,
        versions: opened.versions.map((v) => ({
          id: v.id,
          code: v.code,
          status: v.status ?? undefined,
          notes: v.notes.map(toProtoRecord),
        })),
      };
    },

    async createGuestNote(req: recordsv1.CreateGuestNoteRequest, ctx: CallContext) {
      const note = await shares.guestNote(
        {
          token: req.token,
          password: req.password,
          sessionLinkId: req.sessionLinkId,
          versionId: req.versionId,
          comment: req.comment,
          verdict: req.verdict,
          guestName: req.guestName,
        },
        ctx.requestId,
      );
      return { note: toProtoRecord(note) };
    },

    async checkShareLink(req: recordsv1.CheckShareLinkRequest) {
      return { playlistId: await shares.check(req.linkId) };
    },
  };
}
