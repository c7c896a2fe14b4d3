/**
 * reelbase.records.v1.SyncService: proto messages ↔ the sync domain calls, nothing more. Every answer
 * is JSON (docs/api-notes.md, "Sync").
 */
import type { UnaryHandlers } from '@reelbase/lib-platform';
import type { syncv1 } from '@reelbase/proto';
import type { SyncImporter } from '../domain/sync.import.js';
import type { SyncReads } from '../domain/sync.reads.js';

/** The full proto name, used for registration. */
export const SYNC_SERVICE_NAME = 'reelbase.records.v1.SyncService';

export interface SyncHandlerDeps {
  importer: SyncImporter;
  reads: SyncReads;
}

export function syncHandlers({ importer, reads }: SyncHandlerDeps): UnaryHandlers<syncv1.SyncServiceServer> {
  return {
    import: async (req, ctx) => ({ json: JSON.stringify(await importer.import(req.bodyJson, ctx)) }),
    mappings: async (req, ctx) => ({
      json: JSON.stringify(await reads.mappings({ source: req.source, entityType: req.entityType, externalId: req.externalId, id: req.id }, ctx)),
    }),
    changes: async (req, ctx) => ({
      json: JSON.stringify(
        await reads.changes(
          req.events.map((e) => ({ eventId: e.eventId, entityId: e.entityId, createdAt: e.createdAt, entityType: e.entityType })),
          req.source,
          ctx,
        ),
      ),
    }),
  };
}
