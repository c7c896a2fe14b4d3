/**
 * Schemas of the action routes (docs/api-notes.md, "Actions"): the bodies, the launch token
 * path and the JSON the schema service's answers are (the OpenAPI document shows these).
 */
import {
  ACTION_REF_CHARS,
  CUSTOM_ACTION_LIMITS,
  DEFINITION_CODE,
  DEFINITION_CODE_PATTERN,
  MAX_ACTION_RECORDS,
  MAX_CUSTOM_ACTIONS,
  ROLES,
  WebhookSecret,
} from '@reelbase/lib-platform';
import { z } from 'zod';
import { EntityTypeCode, OutboundUrl, Role, Uuid } from './common.schema.js';

const EntityIds = z.array(Uuid).min(1).max(MAX_ACTION_RECORDS).describe(`1 to ${MAX_ACTION_RECORDS} record ids of \`entity_type\` in the project, each once.`);

export const ActionsListBody = z
  .strictObject({
    project_id: Uuid,
    entity_type: EntityTypeCode.describe('The type of every record named (a Task selects its step’s launchers).'),
    entity_ids: EntityIds,
  })
  .meta({ id: 'ActionsListBody', description: 'Body of POST /actions/list: the record or selection to list actions for.' });

export const ActionsExecuteBody = z
  .strictObject({
    action_id: z.string().min(1).max(ACTION_REF_CHARS).describe('An `id` from `POST /actions/list` for the same records.'),
    project_id: Uuid,
    entity_type: EntityTypeCode,
    entity_ids: EntityIds,
  })
  .meta({ id: 'ActionsExecuteBody', description: 'Body of POST /actions/execute.' });

export const ActionItem = z
  .object({
    id: z.string().describe('`launch:<application code>` for a launch action; the custom action’s id otherwise.'),
    kind: z.enum(['launch', 'webhook']),
    label: z.string(),
    app: z.string().optional().describe('Launch actions: the application’s `group`, else its `code`.'),
    variant: z.string().optional().describe('Launch actions: the application’s `version`, when it has one.'),
    icon: z.string().optional(),
    group: z.string().optional().describe('Launch actions: the application’s `group`, when it has one.'),
    order: z.number().int().describe('Position in the list: launch actions (catalog order) first, then custom actions (list order).'),
  })
  .meta({ id: 'ActionItem', description: 'One action the caller can run on the records.' });

export const ActionList = z.object({ items: z.array(ActionItem) }).meta({ id: 'ActionList' });

export const ActionLaunchOut = z
  .object({
    kind: z.literal('launch'),
    token: z.string().describe('One-time token (256 random bits), valid 10 minutes, for the caller only.'),
    expires_at: z.string(),
    uri: z.string().describe('`reelbase-launcher://launch?server=<origin>&token=<token>` (the origin URL-encoded).'),
  })
  .meta({ id: 'ActionLaunch', description: 'A launch request: the studio launcher opens `uri` and fetches `GET /actions/launch/{token}`.' });

export const ActionWebhookOut = z
  .object({ kind: z.literal('webhook'), delivery_id: Uuid.describe('The delivery the notifier makes (signed, retried like a webhook delivery).') })
  .meta({ id: 'ActionWebhook', description: 'A webhook action, queued for delivery.' });

export const ActionExecuteOut = z.union([ActionLaunchOut, ActionWebhookOut]).meta({ id: 'ActionExecuteResult' });

export const LaunchTokenPath = z.strictObject({ token: z.string().min(1).max(ACTION_REF_CHARS) });

const StringMap = z.record(z.string(), z.string());

export const LaunchPayloadOut = z
  .object({
    app: z.string(),
    variant: z.string().nullable(),
    label: z.string(),
    executables: z.object({ linux: z.string().optional(), windows: z.string().optional(), darwin: z.string().optional() }).optional(),
    args: z.array(z.string()).describe('The application’s, then each active tool’s, in order.'),
    environment: StringMap.describe(
      'The application variant’s environment merged with each active tool’s, in order: the last value of a key wins, ' +
        'except keys ending in `PATH`, whose values are joined with `:` in order.',
    ),
    tools: z
      .array(z.object({ tool: z.string(), label: z.string(), version: z.string() }))
      .describe('The active tools (`GET /schema/tools/active` for the project and step).'),
    context: z.object({
      project: z.object({ id: Uuid, code: z.string().nullable(), name: z.string().nullable() }),
      entity: z
        .object({ type: z.string(), id: Uuid, code: z.string().nullable().optional(), name: z.string().nullable().optional() })
        .describe('The record (its `code`, else its `name`); for a Task, what its `data.entity` links to (the Task itself when it links nothing).'),
      task: z.object({ id: Uuid, name: z.string().nullable(), step: z.string().nullable() }).optional().describe('When the record is a Task.'),
    }),
  })
  .meta({ id: 'LaunchPayload', description: 'What the launcher starts: the application variant, its tools, environment, arguments and context.' });

export const CustomAction = z
  .strictObject({
    id: z.string().regex(DEFINITION_CODE).describe(`Matches \`${DEFINITION_CODE_PATTERN}\` (never \`launch:…\`).`),
    label: z.string().min(1).max(CUSTOM_ACTION_LIMITS.labelChars),
    url: OutboundUrl.describe('Where the action is POSTed (http or https).'),
    entity_types: z.array(EntityTypeCode).min(1).max(CUSTOM_ACTION_LIMITS.entityTypes).describe('Listed for records of these types.'),
    roles: z.array(Role).min(1).max(ROLES.length).optional().describe('Listed for these roles only; absent: every role.'),
    secret: WebhookSecret.nullable()
      .optional()
      .describe('Signs each delivery (`X-Signature`). Absent: the action keeps the secret its id had; `null`: no secret. Never returned.'),
    icon: z.string().max(CUSTOM_ACTION_LIMITS.iconChars).nullable().optional(),
  })
  .meta({ id: 'CustomActionBody', description: 'One custom action of the studio list.' });

export const CustomActionsBody = z
  .strictObject({
    actions: z
      .array(CustomAction)
      .max(MAX_CUSTOM_ACTIONS)
      .superRefine(
        (items, ctx) => {
          // Also when other items have problems, so every problem is answered at once.
          const seen = new Set<unknown>();
          items.forEach((a: unknown, i) => {
            const id = typeof a === 'object' && a !== null ? (a as { id?: unknown }).id : undefined;
            if (typeof id !== 'string') return;
            if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `Duplicate action id ${JSON.stringify(id)}`, path: [i, 'id'], input: id });
            seen.add(id);
          });
        },
        { when: () => true },
      ),
  })
  .meta({ id: 'CustomActionsBody', description: `Body of PUT /actions/custom: replaces the studio’s custom actions (at most ${MAX_CUSTOM_ACTIONS}).` });

export const CustomActionOut = z
  .object({
    id: z.string(),
    label: z.string(),
    url: z.string(),
    entity_types: z.array(z.string()),
    roles: z.array(z.string()).nullable().describe('null: every role.'),
    icon: z.string().nullable(),
    has_secret: z.boolean(),
  })
  .meta({ id: 'CustomAction', description: 'One custom action, with `has_secret` instead of its secret.' });

export const CustomActionsOut = z.object({ actions: z.array(CustomActionOut) }).meta({ id: 'CustomActions' });
