/**
 * reelbase.records.v1.SiteSyncService: proto messages ↔ site sync calls, nothing more.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { sitesyncv1 } from '@reelbase/proto';
import type { SiteSync } from '../domain/sitesync.service.js';
import type { Site, SiteState } from '../domain/sitesync.types.js';

/** The full proto name, used for registration and health checks. */
export const SITESYNC_SERVICE_NAME = 'reelbase.records.v1.SiteSyncService';

function toProtoSite(s: Site): sitesyncv1.Site {
  return { id: s.id, code: s.code, name: s.name, kind: s.kind, root: s.root ?? undefined, createdAt: s.createdAt, updatedAt: s.updatedAt };
}

export function toProtoState(s: SiteState): sitesyncv1.SiteState {
  return {
    representationId: s.representationId,
    site: s.site,
    status: s.status,
    priority: s.priority,
    progress: s.progress,
    size: s.size ?? undefined,
    totalSize: s.totalSize ?? undefined,
    attempts: s.attempts,
    error: s.error ?? undefined,
    agent: s.agent ?? undefined,
    updatedAt: s.updatedAt,
    projectId: s.projectId ?? undefined,
    leaseExpiresAt: s.leaseExpiresAt ?? undefined,
  };
}

export interface SiteSyncHandlerDeps {
  sitesync: SiteSync;
}

/** Builds the handlers registered with GrpcServer under {@link SITESYNC_SERVICE_NAME}. */
export function siteSyncHandlers({ sitesync }: SiteSyncHandlerDeps): UnaryHandlers<sitesyncv1.SiteSyncServiceServer> {
  return {
    async putSite(req: sitesyncv1.PutSiteRequest, ctx: CallContext) {
      const { site, created } = await sitesync.putSite({ code: req.code, name: req.name, kind: req.kind, root: req.root }, ctx);
      return { site: toProtoSite(site), created };
    },

    async listSites(_req: sitesyncv1.ListSitesRequest, ctx: CallContext) {
      return { sites: (await sitesync.listSites(ctx)).map(toProtoSite) };
    },

    async deleteSite(req: sitesyncv1.DeleteSiteRequest, ctx: CallContext) {
      return { site: toProtoSite(await sitesync.deleteSite(req.code, ctx)) };
    },

    async requestSync(req: sitesyncv1.RequestSyncRequest, ctx: CallContext) {
      return sitesync.request({ representationIds: req.representationIds, site: req.site, priority: req.priority }, ctx);
    },

    async listStates(req: sitesyncv1.ListStatesRequest, ctx: CallContext) {
      const page = await sitesync.list(
        {
          projectId: req.projectId,
          site: req.site,
          status: req.status,
          representationId: req.representationId,
          limit: req.limit,
          cursor: req.cursor,
        },
        ctx,
      );
      return { items: page.items.map(toProtoState), nextCursor: page.nextCursor ?? undefined };
    },

    async summarizeStates(req: sitesyncv1.SummarizeStatesRequest, ctx: CallContext) {
      const counts = await sitesync.summary({ projectId: req.projectId, site: req.site }, ctx);
      return { counts: Object.entries(counts).map(([status, count]) => ({ status, count })) };
    },

    async claimStates(req: sitesyncv1.ClaimStatesRequest, ctx: CallContext) {
      const claimed = await sitesync.claim({ site: req.site, agent: req.agent, limit: req.limit, leaseSeconds: req.leaseSeconds }, ctx);
      return { items: claimed.map((c) => ({ state: toProtoState(c.state), lease: c.lease })) };
    },

    async reportState(req: sitesyncv1.ReportStateRequest, ctx: CallContext) {
      const state = await sitesync.report(
        {
          representationId: req.representationId,
          site: req.site,
          lease: req.lease,
          status: req.status,
          progress: req.progress,
          size: req.size,
          totalSize: req.totalSize,
          error: req.error,
        },
        ctx,
      );
      return { state: toProtoState(state) };
    },

    async updateState(req: sitesyncv1.UpdateStateRequest, ctx: CallContext) {
      const state = await sitesync.update({ representationId: req.representationId, site: req.site, status: req.status, priority: req.priority }, ctx);
      return { state: toProtoState(state) };
    },
  };
}
