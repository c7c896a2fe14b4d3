/**
 * reelbase.schema.v1.AddonsService: proto messages ↔ AddonsService calls, nothing more. Every
 * answer is the JSON object the gateway returns as the response body.
 */
import type { UnaryHandlers } from '@reelbase/lib-platform';
import type { addonsv1 } from '@reelbase/proto';
import type { AddonsService } from '../domain/addons/addons.service.js';

/** The full proto name, used for registration. */
export const ADDONS_SERVICE_NAME = 'reelbase.schema.v1.AddonsService';

const json = (v: unknown): addonsv1.AddonJson => ({ json: JSON.stringify(v) });

export interface AddonsHandlerDeps {
  addons: AddonsService;
}

export function addonsHandlers({ addons }: AddonsHandlerDeps): UnaryHandlers<addonsv1.AddonsServiceServer> {
  return {
    listAddons: async () => json(await addons.list()),
    getAddon: async (req) => json(await addons.get(req.name)),
    getAddonVersion: async (req) => json(await addons.getVersion(req.name, req.version)),
    registerAddonVersion: async (req, ctx) => json((await addons.registerVersion(ctx, req.name, req.version, req.bodyJson)).version),
    setProductionVersion: async (req, ctx) => json(await addons.setProduction(ctx, req.name, req.bodyJson)),
    deleteAddonVersion: async (req, ctx) => json(await addons.deleteVersion(ctx, req.name, req.version)),
    putAddonSettings: async (req, ctx) => json(await addons.putSettings(ctx, req.name, req.projectId, req.bodyJson)),
    pinAddonVersion: async (req, ctx) => json(await addons.pin(ctx, req.name, req.projectId, req.bodyJson)),
    getAddonSettings: async (req) => json(await addons.settings(req.name, req.projectId, req.version)),
  };
}
