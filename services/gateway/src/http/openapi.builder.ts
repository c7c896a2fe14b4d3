/**
 * The OpenAPI 3.1 document, generated from the route definitions and the very zod schemas
 * that validate requests (`z.toJSONSchema`): nothing is maintained twice.
 */
import { z } from 'zod';
import { rolesOf } from '../domain/role.rule.js';
import { ErrorBody, ValidationErrorBody } from '../schemas/common.schema.js';
import type { AnyRoute, RouteResponse } from './route.js';

type Json = Record<string, unknown>;

const REF = (id: string) => `#/components/schemas/${id}`;

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed request.',
  401: 'Missing or invalid bearer token (`WWW-Authenticate: Bearer`).',
  403: 'The caller’s role may not do this, or an agent API key calls a route other than the farm and sitesync agent routes.',
  404: 'Not found (or retired).',
  405: 'Method not allowed: the path exists with the methods listed in `Allow` (`method_not_allowed`).',
  409: 'Conflict: `stale_write` (If-Match no longer matches), `duplicate_code`, `code_in_use` (with `usage`), ...',
  413: 'Body larger than the limit (`payload_too_large`).',
  415: 'A request body that is not JSON (`unsupported_media_type`).',
  422: 'Request validation failed; every problem at once (at most 100 listed, then one `too_many_errors` entry counting the rest).',
  429:
    'Rate limit exceeded; see `Retry-After`. Requests that do the work of many weigh more: a batch counts its requests, an ' +
    'import its items, a site-sync request one per 10 representations, a summary 10 (docs/api-notes.md, "Rate limits").',
  500: 'An unexpected server failure (`internal`); details only in the server log, under the `x-request-id`.',
  503: 'A dependency is down (`unavailable`).',
};

/** The line of an agent route's description (docs/api-notes.md, "Authentication"). */
const AGENT_KEY_LINE =
  'An agent API key (`"scope": "agent"`) may call this route; it calls only the farm and sitesync agent routes (403 `forbidden` on any other).';

/** Strips the per-schema JSON Schema keywords OpenAPI components do not want. */
function clean(schema: Json): Json {
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

function idOf(schema: z.ZodType): string | undefined {
  return z.globalRegistry.get(schema)?.id as string | undefined;
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

/** Builds the document for `routes`. */
/** Whether a POST's answer is stored for its Idempotency-Key (router.builder.ts decides the same way). */
function idempotencyKind(r: AnyRoute): 'stored' | 'never' | 'dry_run' {
  if (r.bodyTypes !== undefined || r.replayable === false) return 'never';
  return typeof r.replayable === 'function' ? 'dry_run' : 'stored';
}

export function buildOpenApi(routes: readonly AnyRoute[], info: OpenApiInfo): Json {
  const requestIds = new Set<string>();
  for (const r of routes) if (r.body) requestIds.add(idOf(r.body) ?? '');
  const opts = { uri: REF, unrepresentable: 'any' as const };
  const inputs = z.toJSONSchema(z.globalRegistry, { ...opts, io: 'input' }).schemas;
  const outputs = z.toJSONSchema(z.globalRegistry, { ...opts, io: 'output' }).schemas;
  const schemas: Record<string, Json> = {};
  for (const [id, s] of Object.entries(outputs)) schemas[id] = clean((requestIds.has(id) ? inputs[id] : s) as Json);

  const ref = (schema: z.ZodType, io: 'input' | 'output'): Json => {
    const id = idOf(schema);
    return id ? { $ref: REF(id) } : clean(z.toJSONSchema(schema, { ...opts, io }) as Json);
  };

  const parameters = (schema: z.ZodType | undefined, where: 'path' | 'query'): Json[] => {
    if (!schema) return [];
    const js = z.toJSONSchema(schema, { ...opts, io: 'input' }) as { properties?: Record<string, Json>; required?: string[] };
    return Object.entries(js.properties ?? {}).map(([name, s]) => {
      const { description, ...rest } = s;
      return { name, in: where, required: where === 'path' || (js.required ?? []).includes(name), description, schema: rest };
    });
  };

  const response = (r: RouteResponse): Json => {
    const out: Json = { description: r.description };
    if (r.headers)
      out.headers = Object.fromEntries(Object.entries(r.headers).map(([k, h]) => [k, { description: h.description, schema: h.schema ?? { type: 'string' } }]));
    if (r.schema) out.content = { [r.contentType ?? 'application/json']: { schema: ref(r.schema, 'output') } };
    else if (r.contentType) out.content = { [r.contentType]: { schema: { type: 'string' } } };
    return out;
  };

  const errorResponse = (status: number): Json => {
    const schema = status === 422 ? ValidationErrorBody : ErrorBody;
    const out: Json = { description: ERROR_TEXT[status] ?? 'Error.', content: { 'application/json': { schema: ref(schema, 'output') } } };
    if (status === 429) out.headers = { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } };
    if (status === 401) out.headers = { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } };
    if (status === 405) out.headers = { Allow: { description: 'The methods the path accepts.', schema: { type: 'string' } } };
    return out;
  };

  /** The Idempotency-Key header every POST takes. */
  /** `stored`: a write whose answer is kept; `never`: read-only, a credential, a lease or a stream; `dry_run`: kept unless a dry run. */
  const idempotencyParam = (kept: 'stored' | 'never' | 'dry_run'): Json => ({
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      kept === 'never'
        ? 'Checked (1 to 255 printable ASCII characters, else 422 at `["header","idempotency-key"]`) but not replayed: this ' +
          'answer is read-only, holds a credential or a lease, or this body is streamed, so it is never stored and a retry runs again.'
        : 'Makes a retry safe: the same key from the same caller on this concrete path with the same body within 24 h ' +
          'answers the first answer again (status, body, `ETag`; header `Idempotent-Replayed: true`) and writes nothing. ' +
          'Another body with the key: 409 `idempotency_conflict`. While the first request still runs, a repeat waits for ' +
          'it up to 30 s (at most 8 repeats of one key wait at once on a gateway; more are answered at once), then 409 ' +
          '`idempotency_in_progress`. A 5xx or 429 answer is not kept. A caller holds at most 10,000 live keys ' +
          '(`IDEMPOTENCY_MAX_KEYS`): a new key beyond them is 429 with `Retry-After` until the oldest expires. 1 to 255 ' +
          'printable ASCII characters, else 422 at `["header","idempotency-key"]` (docs/api-notes.md, "Idempotent retries").' +
          (kept === 'dry_run' ? ' A `dry_run` writes nothing, so its answer is not stored.' : ''),
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  });

  const paths: Record<string, Json> = {};
  for (const r of routes) {
    const statuses = new Set<number>(r.errors ?? []);
    if (r.auth !== 'public') statuses.add(401);
    if (r.auth !== 'public' && (r.rateLimited ?? true)) statuses.add(429);
    // Every authenticated route refuses an agent key unless it is an agent route; `allow` and `authorize` refuse roles.
    if (r.auth !== 'public' || r.authorize || r.allow) statuses.add(403);
    // Every route reads a JSON body (one it does not take is a 422) and checks query strings.
    statuses.add(422);
    if (r.body) statuses.add(413).add(415);
    statuses.add(405).add(500);
    // An Idempotency-Key used with another body (docs/api-notes.md, "Idempotent retries").
    if (r.method === 'post') statuses.add(409);
    const responses: Json = {};
    for (const [status, resp] of Object.entries(r.responses)) responses[status] = response(resp);
    for (const s of [...statuses].sort()) if (!responses[s]) responses[s] = errorResponse(s);

    const op: Json = {
      operationId: r.operationId,
      summary: r.summary,
      tags: r.tags,
      parameters: [
        ...parameters(r.params ?? r.docParams, 'path'),
        ...parameters(r.query ?? r.docQuery, 'query'),
        ...(r.headerParams ?? []).map((h) => ({
          name: h.name,
          in: 'header',
          required: h.required ?? false,
          description: h.description,
          schema: h.schema ?? { type: 'string' },
        })),
        ...(r.method === 'post' ? [idempotencyParam(idempotencyKind(r))] : []),
        {
          name: 'x-request-id',
          in: 'header',
          required: false,
          description: 'Echoed on the response; generated when absent.',
          schema: { type: 'string', maxLength: 128 },
        },
      ],
      responses,
      security: r.auth === 'public' ? [] : r.auth === 'optional' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }],
    };
    // The roles of `allow`, as a line of the description and as `x-roles` (the router refuses the others with 403).
    const roles = r.allow ? rolesOf(r.allow) : undefined;
    // An agent route says so, as a line and as `x-agent-key`; every other route refuses agent keys (403).
    const agent = r.agent === true ? AGENT_KEY_LINE : undefined;
    const description = [r.description, agent, roles && `Roles: ${roles.join(', ')}.`].filter(Boolean).join('\n\n');
    if (description) op.description = description;
    if (roles) op['x-roles'] = roles;
    if (agent) op['x-agent-key'] = true;
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(r.docBody ?? r.body, 'input') } } };
    else if (r.bodyTypes?.length) {
      // Bodies the handler streams itself: a form with a `file` part, or the bytes as they are.
      const content: Record<string, Json> = {};
      for (const type of r.bodyTypes) {
        content[type] =
          type === 'multipart/form-data'
            ? { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] } }
            : { schema: { type: 'string', format: 'binary' } };
      }
      op.requestBody = { required: true, content };
    }
    (paths[r.path] ??= {})[r.method] = op;
  }

  return {
    openapi: '3.1.0',
    info,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A login token (JWT) or an API key (svc_…).' },
      },
    },
  };
}
