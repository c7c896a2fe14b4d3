/**
 * The schema and catalog routes' requests and answers (docs/api-notes.md, Schema) between the
 * REST input and the schema service's SchemaService, per the operations table (lib-platform's
 * SCHEMA_OPERATIONS): a change carries its validated body as JSON and the codes its row names; a
 * catalog read its query; every answer is JSON text passed on as it came.
 */
import type { SchemaCodeSource, SchemaOperation } from '@reelbase/lib-platform';
import type { schemav1 } from '@reelbase/proto';

/** The validated input of a route: what a path code is read from. */
export interface SchemaRouteParts {
  path: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: Record<string, unknown> | undefined;
}

/** The route's validated params, query and body as {@link SchemaRouteParts}. */
export function schemaRouteParts(input: { params: unknown; query: unknown; body: unknown }): SchemaRouteParts {
  return {
    path: (input.params ?? {}) as SchemaRouteParts['path'],
    query: (input.query ?? {}) as SchemaRouteParts['query'],
    body: input.body as SchemaRouteParts['body'],
  };
}

/** The value `source` names (`path.code`, `query.entity_code`, `body.code`), or ''. */
function codeOf(source: SchemaCodeSource | undefined, parts: SchemaRouteParts): string {
  if (source === undefined) return '';
  const dot = source.indexOf('.');
  const part = source.slice(0, dot) as keyof SchemaRouteParts;
  const value = parts[part]?.[source.slice(dot + 1)];
  return typeof value === 'string' ? value : '';
}

/** A catalog read's request: the project and step of its query. */
export function catalogQuery(parts: SchemaRouteParts): schemav1.CatalogQuery {
  return { projectId: parts.query.project_id, step: parts.query.step };
}

/** An operation's request: the body as JSON (none: empty) and the codes its row names. */
export function schemaRequest(op: SchemaOperation, parts: SchemaRouteParts): schemav1.JsonBody {
  return {
    bodyJson: parts.body === undefined ? '' : JSON.stringify(parts.body),
    code: codeOf(op.codes?.code, parts),
    subCode: codeOf(op.codes?.subCode, parts),
    entityCode: codeOf(op.codes?.entityCode, parts),
  };
}

/** An answer's JSON text (an empty answer is `{}`). */
export const schemaAnswerText = (res: schemav1.JsonResult): string => (res.json === '' ? '{}' : res.json);
