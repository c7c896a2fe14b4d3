/**
 * The actions' requests and answers (docs/api-notes.md, "Actions") between the REST JSON and the
 * schema service's ActionsService: the custom action list goes as its typed message and, for one
 * release, as the deprecated `body_json` too; answers are read from their typed messages
 * (docs/architecture.md, "Protocol buffers").
 */
import { actionsCodec as codec, type JsonObject } from '@reelbase/lib-platform';
import type { actionsv1 } from '@reelbase/proto';
import { answerText, typedList } from './answer.json.js';

/** The record selection of a list or execute. */
export interface ActionSelectionBody {
  project_id: string;
  entity_type: string;
  entity_ids: string[];
}

export function listActionsRequest(body: ActionSelectionBody): actionsv1.ListActionsRequest {
  return { projectId: body.project_id, entityType: body.entity_type, entityIds: body.entity_ids };
}

export function executeActionRequest(body: ActionSelectionBody & { action_id: string }): actionsv1.ExecuteActionRequest {
  return { actionId: body.action_id, ...listActionsRequest(body) };
}

export const actionListText = (res: actionsv1.ListActionsResponse): string =>
  answerText(typedList(res.items, res.json), (items) => ({ items: items.map(codec.actionItemFromProto) }), res.json);

/** An execute's answer as an object (the route adds the launcher URI to a launch request). */
export function executeAnswer(res: actionsv1.ExecuteActionResponse): JsonObject {
  if (res.result) return codec.executeResultFromProto(res.result);
  return JSON.parse(res.json === '' ? '{}' : res.json) as JsonObject;
}

/** The launcher's URI of a launch request `token`, served from `origin`. */
export function launcherUri(origin: string, token: string): string {
  return `reelbase-launcher://launch?server=${encodeURIComponent(origin)}&token=${encodeURIComponent(token)}`;
}

export const launchPayloadText = (res: actionsv1.TakeLaunchResponse): string => answerText(res.payload, codec.launchPayloadFromProto, res.json);

/** PUT /actions/custom as the request's typed `body` and deprecated `body_json`. */
export function customActionsRequest(body: JsonObject): actionsv1.PutCustomActionsRequest {
  return { bodyJson: JSON.stringify(body), body: codec.customActionListToProto(body) };
}

/** The custom action list (GET and PUT answer it alike) as JSON text. */
export const customActionsText = (res: { json: string; actions: actionsv1.CustomActionView[] }): string =>
  answerText(typedList(res.actions, res.json), (list) => ({ actions: list.map(codec.customActionViewFromProto) }), res.json);
