/**
 * reelbase.schema.v1.ActionsService: proto messages ↔ the actions' use cases, nothing more.
 * Every answer is the JSON object the gateway returns as the response body.
 */
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { actionsv1 } from '@reelbase/proto';
import type { ActionsService } from '../domain/actions/actions.service.js';

/** The full proto name, used for registration and health checks. */
export const ACTIONS_SERVICE_NAME = 'reelbase.schema.v1.ActionsService';

export interface ActionsHandlerDeps {
  actions: ActionsService;
}

const json = (v: unknown): { json: string } => ({ json: JSON.stringify(v) });

export function actionsHandlers({ actions }: ActionsHandlerDeps): UnaryHandlers<actionsv1.ActionsServiceServer> {
  return {
    listActions: async (req: actionsv1.ListActionsRequest, ctx: CallContext) =>
      json(await actions.list({ projectId: req.projectId, entityType: req.entityType, entityIds: req.entityIds }, ctx)),
    executeAction: async (req: actionsv1.ExecuteActionRequest, ctx: CallContext) =>
      json(await actions.execute({ actionId: req.actionId, projectId: req.projectId, entityType: req.entityType, entityIds: req.entityIds }, ctx)),
    takeLaunch: async (req: actionsv1.TakeLaunchRequest, ctx: CallContext) => json(await actions.takeLaunch(req.token, ctx)),
    getCustomActions: async (_req: actionsv1.GetCustomActionsRequest, ctx: CallContext) => json(await actions.getCustomActions(ctx)),
    putCustomActions: async (req: actionsv1.PutCustomActionsRequest, ctx: CallContext) => json(await actions.putCustomActions(req.bodyJson, ctx)),
  };
}
