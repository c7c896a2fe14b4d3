/**
 * Checks of a webhook create or change as the notifier receives it (the gateway checks the
 * same before; this is the service's own guard for every caller). Problems name the field:
 * `["url"]`, `["entity_types", 2]`; the gateway puts `body` in front.
 */
import { AppError, EVENT_ACTIONS, notifierPolicy, type Problem } from '@reelbase/lib-platform';
import { WEBHOOK_KINDS, type WebhookKind } from './delivery.policy.js';

/** A record type (`Shot`) or a schema event type (`Schema.Status`). */
const ENTITY_TYPE = /^[A-Z][A-Za-z0-9]{0,63}(\.[A-Z][A-Za-z0-9]{0,63})?$/;
export const { MIN_SECRET_LENGTH, MAX_SECRET_LENGTH } = notifierPolicy;
const { MAX_FILTERS } = notifierPolicy;

/** The fields of a create or change that are set. */
export interface WebhookInput {
  url?: string;
  kind?: string;
  secret?: string;
  entityTypes?: string[];
  actions?: string[];
}

/** Every problem with the fields of `input` that are set (empty when none). */
export function webhookProblems(input: WebhookInput): Problem[] {
  const problems: Problem[] = [];
  if (input.kind !== undefined && !WEBHOOK_KINDS.includes(input.kind as WebhookKind)) {
    problems.push({ loc: ['kind'], msg: "Input should be 'webhook' or 'chat'", type: 'enum' });
  }
  if (input.secret !== undefined && (input.secret.length < MIN_SECRET_LENGTH || input.secret.length > MAX_SECRET_LENGTH)) {
    problems.push({ loc: ['secret'], msg: `the secret must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters`, type: 'string_too_long' });
  }
  const list = (name: 'entity_types' | 'actions', values: string[] | undefined, ok: (v: string) => boolean, msg: string) => {
    if (values === undefined) return;
    if (values.length > MAX_FILTERS) problems.push({ loc: [name], msg: `at most ${MAX_FILTERS} values`, type: 'too_long' });
    values.forEach((v, i) => {
      if (!ok(v)) problems.push({ loc: [name, i], msg, type: 'value_error' });
    });
  };
  list('entity_types', input.entityTypes, (v) => ENTITY_TYPE.test(v), 'must be an entity type code such as Shot');
  list('actions', input.actions, (v) => (EVENT_ACTIONS as readonly string[]).includes(v), "Input should be 'create', 'update' or 'delete'");
  return problems;
}

/** Throws `invalid` with every problem of `input` plus `more` (e.g. the URL check). */
export function assertWebhookInput(input: WebhookInput, more: Problem[] = []): void {
  const problems = [...more, ...webhookProblems(input)];
  if (problems.length) throw AppError.invalid(problems);
}
