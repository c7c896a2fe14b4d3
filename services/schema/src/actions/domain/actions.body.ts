/**
 * The inputs of the actions, checked again by the service (the gateway validates them first):
 * the studio's custom action list, and the record selection of a list or execute.
 */
import {
  AppError,
  CUSTOM_ACTION_LIMITS,
  DEFINITION_CODE_PATTERN,
  ENTITY_TYPE_CODE_PATTERN,
  MAX_ACTION_RECORDS,
  MAX_CUSTOM_ACTIONS,
  OutboundUrl,
  ROLES,
  WebhookSecret,
  isUuid,
  type Problem,
} from '@reelbase/lib-platform';
import { z } from 'zod';
import { decodeBody, parseBody, type BodyInput } from '../../kernel/domain/bodies.js';

export const CustomActionsBody = z.strictObject({
  actions: z
    .array(
      z.strictObject({
        id: z.string().regex(new RegExp(DEFINITION_CODE_PATTERN), 'letters, digits, `_`, `-` and `.`, at most 64, starting with a letter or digit'),
        label: z.string().min(1).max(CUSTOM_ACTION_LIMITS.labelChars),
        url: OutboundUrl,
        entity_types: z
          .array(z.string().regex(new RegExp(ENTITY_TYPE_CODE_PATTERN), 'an entity type code'))
          .min(1)
          .max(CUSTOM_ACTION_LIMITS.entityTypes),
        roles: z.array(z.enum(ROLES)).min(1).max(ROLES.length).optional(),
        secret: WebhookSecret.nullable().optional(),
        icon: z.string().max(CUSTOM_ACTION_LIMITS.iconChars).nullable().optional(),
      }),
    )
    .max(MAX_CUSTOM_ACTIONS),
});

export type CustomActionsInput = z.infer<typeof CustomActionsBody>;

/** An id used by an earlier action of the list, at `["body","actions",i,"id"]`. */
function repeatedIds(raw: unknown): Problem[] {
  const list = typeof raw === 'object' && raw !== null ? (raw as { actions?: unknown }).actions : undefined;
  if (!Array.isArray(list)) return [];
  const seen = new Set<string>();
  const out: Problem[] = [];
  list.forEach((a: unknown, i) => {
    const id = typeof a === 'object' && a !== null ? (a as { id?: unknown }).id : undefined;
    if (typeof id !== 'string') return;
    if (seen.has(id)) out.push({ loc: ['body', 'actions', i, 'id'], msg: `action id ${id} is repeated`, type: 'value_error' });
    seen.add(id);
  });
  return out;
}

/** The custom action list of a PUT body; invalid (422) with every problem at once otherwise. */
export function parseCustomActions(input: BodyInput): CustomActionsInput {
  const raw = decodeBody(input);
  let problems: Problem[] = [];
  let body: CustomActionsInput | undefined;
  try {
    body = parseBody(CustomActionsBody, raw as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
    problems = [...(err.problems ?? [])];
  }
  problems.push(...repeatedIds(raw));
  if (problems.length || !body) throw AppError.invalid(problems);
  return body;
}

/** The record selection of a list or execute. */
export interface SelectionInput {
  projectId: string;
  entityType: string;
  entityIds: string[];
}

/** The selection's problems (located under `body`), ids lower-cased. */
export function selectionProblems(s: SelectionInput): Problem[] {
  const problems: Problem[] = [];
  if (!isUuid(s.projectId)) problems.push({ loc: ['body', 'project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
  if (!new RegExp(ENTITY_TYPE_CODE_PATTERN).test(s.entityType)) {
    problems.push({ loc: ['body', 'entity_type'], msg: 'an entity type code', type: 'string_pattern_mismatch' });
  }
  if (s.entityIds.length < 1 || s.entityIds.length > MAX_ACTION_RECORDS) {
    problems.push({ loc: ['body', 'entity_ids'], msg: `List should have 1 to ${MAX_ACTION_RECORDS} items`, type: 'too_long' });
  }
  const seen = new Set<string>();
  s.entityIds.forEach((id, i) => {
    if (!isUuid(id)) problems.push({ loc: ['body', 'entity_ids', i], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    else if (seen.has(id.toLowerCase())) problems.push({ loc: ['body', 'entity_ids', i], msg: 'this id is repeated', type: 'value_error' });
    else seen.add(id.toLowerCase());
  });
  return problems;
}

/** The selection checked, ids lower-cased; invalid (422) with every problem otherwise. */
export function checkedSelection(s: SelectionInput, extra: Problem[] = []): SelectionInput {
  const problems = [...selectionProblems(s), ...extra];
  if (problems.length) throw AppError.invalid(problems);
  return { projectId: s.projectId.toLowerCase(), entityType: s.entityType, entityIds: s.entityIds.map((id) => id.toLowerCase()) };
}
