/**
 * Actions (docs/api-notes.md, "Actions"), served by the schema service's ActionsService, which
 * owns every rule (which actions are listed for whom, the records' checks, launch requests,
 * webhook actions): these routes validate the request, relay it with the caller's principal and
 * send the service's answer (mapped between REST and protobuf in mappers/actions.mapper.ts). The custom action list is Admin only (403 before the body is
 * validated; the service checks again); every other route is for any signed-in user.
 */
import type { Request } from 'express';
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import {
  ActionExecuteOut,
  ActionList,
  ActionsExecuteBody,
  ActionsListBody,
  CustomActionsBody,
  CustomActionsOut,
  LaunchPayloadOut,
  LaunchTokenPath,
} from '../schemas/actions.schema.js';
import {
  actionListText,
  customActionsRequest,
  customActionsText,
  executeActionRequest,
  executeAnswer,
  launchPayloadText,
  launcherUri,
  listActionsRequest,
} from '../mappers/actions.mapper.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN } from './route.roles.js';

const TAGS = ['actions'];

/** An answer's JSON text (mappers/actions.mapper.ts) as the response body. */
const reply = (text: string) => Reply.rawJson(text);

export function actionRoutes({ peers, share }: RouteDeps): AnyRoute[] {
  const actions = peers.actions;
  const publicUrl = share?.publicUrl;
  // The same origin as share links: PUBLIC_URL, else the request's scheme and Host.
  const origin = (req: Request) => (publicUrl ? publicUrl.replace(/\/+$/, '') : `${req.protocol}://${req.get('host') ?? 'localhost'}`);
  return [
    defineRoute({
      method: 'post',
      path: '/actions/list',
      // Read-only: an Idempotency-Key is checked, never stored.
      replayable: false,
      operationId: 'listActions',
      summary: 'The actions the caller can run on a record or selection.',
      description:
        'Launch actions (`kind: "launch"`, `id: "launch:<code>"`): one per application the launcher catalog allows here, by the ' +
        'rules of `GET /schema/applications` (the project’s `data.overrides`; for a Task, its `data.step` selects ' +
        '`applicationsByStep`), listed only when exactly one record is given. Custom actions (`kind: "webhook"`) from ' +
        '`PUT /actions/custom`, when `entity_type` is in their `entity_types` and the caller’s role in their `roles`. ' +
        'A missing project or record is 404; a record of another type or another project is 422 at `["body","entity_ids",i]`.',
      tags: TAGS,
      auth: 'bearer',
      body: ActionsListBody,
      responses: { 200: { description: 'The actions, launch actions first.', schema: ActionList } },
      errors: [404, 503],
      handler: async ({ body, ctx }) => reply(actionListText(await actions.listActions(listActionsRequest(body), ctx))),
    }),
    defineRoute({
      method: 'post',
      path: '/actions/execute',
      // The answer holds a credential: never stored, so never replayed.
      replayable: false,
      operationId: 'executeAction',
      summary: 'Runs an action listed for the caller on these records.',
      description:
        'A launch action answers a one-time launch request (`token`, valid 10 minutes, for the caller only) and the ' +
        '`reelbase-launcher://` URI that hands it to the studio launcher; a webhook action is queued with the notifier and ' +
        'answers its `delivery_id` at once (delivered like a webhook: signed with the action’s secret, retried; the body is ' +
        '`{"action_id","user":{"id","name"},"project_id","entity_type","entity_ids","requested_at"}`). An action not listed ' +
        'for the caller and these records is 404; a launch action with more than one record is 422 at `["body","entity_ids"]`. ' +
        'Each execute is an `Action` event (create) with `changes` `{"action_id","kind","entity_type","entity_ids"}`.',
      tags: TAGS,
      auth: 'bearer',
      body: ActionsExecuteBody,
      responses: { 200: { description: 'The launch request, or the queued delivery.', schema: ActionExecuteOut } },
      errors: [404, 503],
      handler: async ({ body, ctx, req }) => {
        const out = executeAnswer(await actions.executeAction(executeActionRequest(body), ctx));
        if (out.kind !== 'launch' || typeof out.token !== 'string') return Reply.json(out);
        return Reply.json({ ...out, uri: launcherUri(origin(req), out.token) });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/actions/launch/{token}',
      operationId: 'takeLaunchRequest',
      summary: 'Takes a launch request: what the launcher starts (once, by the user who made it).',
      description:
        'Only the user who executed the launch action, once, within 10 minutes; anyone else, a second take or an expired ' +
        'token is 404 (and another user’s attempt does not use the token up).',
      tags: TAGS,
      auth: 'bearer',
      params: LaunchTokenPath,
      responses: { 200: { description: 'The launch payload.', schema: LaunchPayloadOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(launchPayloadText(await actions.takeLaunch({ token: params.token }, ctx))),
    }),
    defineRoute({
      method: 'get',
      path: '/actions/custom',
      operationId: 'getCustomActions',
      summary: 'The studio’s custom actions (Admin).',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'manage custom actions' },
      responses: { 200: { description: 'The list, in order, with `has_secret` instead of secrets.', schema: CustomActionsOut } },
      errors: [503],
      handler: async ({ ctx }) => reply(customActionsText(await actions.getCustomActions({}, ctx))),
    }),
    defineRoute({
      method: 'put',
      path: '/actions/custom',
      operationId: 'putCustomActions',
      summary: 'Replaces the studio’s custom actions (Admin).',
      description:
        'An action whose `secret` is absent keeps the secret its `id` had; `"secret": null` removes it. Secrets are ' +
        'encrypted at rest and never returned. Recorded as a `Schema.Actions` event (without secrets).',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'manage custom actions' },
      body: CustomActionsBody,
      responses: { 200: { description: 'The list as stored.', schema: CustomActionsOut } },
      errors: [503],
      handler: async ({ body, ctx }) => reply(customActionsText(await actions.putCustomActions(customActionsRequest(body), ctx))),
    }),
  ];
}
