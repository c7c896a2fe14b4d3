/**
 * Validation of an event-log read (`GET /events?limit=&after=&entity_type=&project_id=`, docs/api-notes.md, Events),
 * and of the projects the gateway leaves out of it for its caller ("Restricted projects").
 * Problems are reported all at once, each naming its parameter (the gateway adds `query`).
 */
import { AppError, isUuid, type Problem } from '@reelbase/lib-platform';

export const MAX_LIMIT = 1000;

/** A checked read of the log. */
export interface ListQuery {
  limit: number;
  /** When set: events with id > after, oldest first; otherwise the newest, newest first. */
  after?: number;
  /** Without `after`: only events with id < before, newest first (the next newest-first page). */
  before?: number;
  entityType?: string;
  projectId?: string;
  /**
   * Projects whose events are left out (docs/api-notes.md, "Restricted projects"): the page, its
   * limit and its byte budget count only the events that remain; events of no project always remain.
   */
  hiddenProjectIds?: string[];
}

export interface ListRequestInput {
  limit: number;
  after?: number;
  before?: number;
  entityType?: string;
  projectId?: string;
  hiddenProjectIds?: readonly string[];
}

/** Checks `input`; throws AppError `invalid` naming every bad parameter. */
export function parseListQuery(input: ListRequestInput): ListQuery {
  const problems: Problem[] = [];
  const { limit, after } = input;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    problems.push({ loc: ['limit'], msg: `Input should be between 1 and ${MAX_LIMIT}`, type: 'range' });
  }
  if (after !== undefined && (!Number.isSafeInteger(after) || after < 0)) {
    problems.push({ loc: ['after'], msg: 'Input should be a non-negative integer', type: 'range' });
  }
  const { before } = input;
  if (before !== undefined && (!Number.isSafeInteger(before) || before < 1)) {
    problems.push({ loc: ['before'], msg: 'Input should be a positive integer', type: 'range' });
  } else if (before !== undefined && after !== undefined) {
    problems.push({ loc: ['before'], msg: 'Only one of after and before may be given', type: 'value_error' });
  }
  // An empty filter means "no filter": proto3 cannot tell an empty string from an absent one everywhere.
  const entityType = input.entityType ? input.entityType : undefined;
  const projectId = input.projectId ? input.projectId : undefined;
  if (projectId !== undefined && !isUuid(projectId)) {
    problems.push({ loc: ['project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
  }
  const hidden = input.hiddenProjectIds ?? [];
  hidden.forEach((id, i) => {
    if (!isUuid(id)) problems.push({ loc: ['hidden_project_ids', i], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
  });
  if (problems.length) throw AppError.invalid(problems);
  const hiddenProjectIds = [...new Set(hidden.map((id) => id.toLowerCase()))];
  return {
    limit,
    ...(after !== undefined ? { after } : {}),
    ...(before !== undefined ? { before } : {}),
    ...(entityType !== undefined ? { entityType } : {}),
    ...(projectId !== undefined ? { projectId: projectId.toLowerCase() } : {}),
    ...(hiddenProjectIds.length > 0 ? { hiddenProjectIds } : {}),
  };
}
