/**
 * reelbase.schema.v1.ActionsService: proto messages ↔ the actions' use cases, nothing more. The
 * custom action list is read from its typed message (from the deprecated `body_json` only when a
 * gateway of the previous release left the typed one out); every answer is typed, with the
 * deprecated `json` filled beside it for one release (docs/architecture.md, "Protocol buffers").
 */
import { actionsCodec as codec, type CallContext, type JsonObject, type UnaryHandlers } from '@reelbase/lib-platform';
import type { actionsv1 } from '@reelbase/proto';
import type { ActionsService } from '../domain/actions.service.js';

/** The full proto name, used for registration and health checks. */
export const ACTIONS_SERVICE_NAME = 'reelbase.schema.v1.ActionsService';

export interface ActionsHandlerDeps {
  actions: ActionsService;
}

const customActions = (out: { actions: object[] }) => ({
  json: JSON.stringify(out),
  actions: out.actions.map((a) => codec.customActionViewToProto(a as JsonObject)),
});

export function actionsHandlers({ actions }: ActionsHandlerDeps): UnaryHandlers<actionsv1.ActionsServiceServer> {
  return {
    listActions: async (req: actionsv1.ListActionsRequest, ctx: CallContext) => {
      const out = await actions.list({ projectId: req.projectId, entityType: req.entityType, entityIds: req.entityIds }, ctx);
      return { json: JSON.stringify(out), items: out.items.map((a) => codec.actionItemToProto(a as unknown as JsonObject)) };
    },
    executeAction: async (req: actionsv1.ExecuteActionRequest, ctx: CallContext) => {
      const out = await actions.execute({ actionId: req.actionId, projectId: req.projectId, entityType: req.entityType, entityIds: req.entityIds }, ctx);
      return { json: JSON.stringify(out), result: codec.executeResultToProto(out) };
    },
    takeLaunch: async (req: actionsv1.TakeLaunchRequest, ctx: CallContext) => {
      const payload = await actions.takeLaunch(req.token, ctx);
      return { json: JSON.stringify(payload), payload: codec.launchPayloadToProto(payload as unknown as JsonObject) };
    },
    getCustomActions: async (_req: actionsv1.GetCustomActionsRequest, ctx: CallContext) => customActions(await actions.getCustomActions(ctx)),
    putCustomActions: async (req: actionsv1.PutCustomActionsRequest, ctx: CallContext) =>
      customActions(await actions.putCustomActions(req.body ? codec.customActionListFromProto(req.body) : req.bodyJson, ctx)),
  };
}
