/**
 * reelbase.schema.v1.AddonsService: proto messages ↔ AddonsService calls, nothing more. The
 * PATCH and pin bodies are read from their typed fields (from `body_json` only when a gateway of
 * the previous release left them out); a version's and a layer's free-form bodies stay JSON text.
 * Every answer is typed, with the deprecated `json` filled beside it for one release
 * (docs/architecture.md, "Protocol buffers").
 */
import { addonsCodec as codec, type JsonObject, type UnaryHandlers } from '@reelbase/lib-platform';
import type { addonsv1 } from '@reelbase/proto';
import type { AddonsService } from '../domain/addons.service.js';

/** The full proto name, used for registration. */
export const ADDONS_SERVICE_NAME = 'reelbase.schema.v1.AddonsService';

/** The answer of kind `kind`: typed, and as JSON for a gateway of the previous release. */
const answer =
  (kind: codec.AddonAnswerKind) =>
  (v: unknown): addonsv1.AddonJson => ({ json: JSON.stringify(v), answer: codec.addonAnswerToProto(kind, v as JsonObject) });

export interface AddonsHandlerDeps {
  addons: AddonsService;
}

export function addonsHandlers({ addons }: AddonsHandlerDeps): UnaryHandlers<addonsv1.AddonsServiceServer> {
  const body = (route: 'production' | 'pin', req: addonsv1.AddonBody) => codec.addonBodyFromProto(route, req) ?? req.bodyJson;
  return {
    listAddons: async () => answer('addons')(await addons.list()),
    getAddon: async (req) => answer('addon')(await addons.get(req.name)),
    getAddonVersion: async (req) => answer('version')(await addons.getVersion(req.name, req.version)),
    registerAddonVersion: async (req, ctx) => answer('version')((await addons.registerVersion(ctx, req.name, req.version, req.bodyJson)).version),
    setProductionVersion: async (req, ctx) => answer('addon')(await addons.setProduction(ctx, req.name, body('production', req))),
    deleteAddonVersion: async (req, ctx) => answer('deleted')(await addons.deleteVersion(ctx, req.name, req.version)),
    putAddonSettings: async (req, ctx) => answer('overrides')(await addons.putSettings(ctx, req.name, req.projectId, req.bodyJson)),
    pinAddonVersion: async (req, ctx) => answer('pin')(await addons.pin(ctx, req.name, req.projectId, body('pin', req))),
    getAddonSettings: async (req) => answer('settings')(await addons.settings(req.name, req.projectId, req.version)),
  };
}
