/**
 * A route is one declarative object: method, OpenAPI path, who may call it, the zod schemas
 * of its path, query and body, its documented responses and its handler. The same object
 * mounts on express (router.builder.ts) and documents itself (openapi.builder.ts), so the
 * OpenAPI document cannot drift from what is validated.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { RoleRule } from '../domain/role.rule.js';
import type { AuthedPrincipal } from './locals.js';

/** `public`: no token; `bearer`: token required; `optional`: a token, when sent, must be valid. */
export type AuthMode = 'public' | 'bearer' | 'optional';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One documented response of a route. */
export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
  headers?: Record<string, { description: string; schema?: Record<string, unknown> }>;
}

/** What a handler receives: validated input plus the call context for gRPC. */
export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  ctx: CallContext;
  principal: AuthedPrincipal | undefined;
  req: Request;
  res: Response;
}

/** A request header documented as an operation parameter (read by the handler itself). */
export interface HeaderParam {
  name: string;
  description: string;
  required?: boolean;
  schema?: Record<string, unknown>;
}

/** Raw (unvalidated) input given to `authorize`, which runs before validation. */
export interface RawInput {
  params: Record<string, string>;
  body: unknown;
  /** The query as parsed, unvalidated (given to `authorize`; absent for `authorizeAnonymous`). */
  query?: Record<string, unknown>;
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDef<P extends z.ZodType | undefined = any, Q extends z.ZodType | undefined = any, B extends z.ZodType | undefined = any> {
  method: HttpMethod;
  /** OpenAPI form, e.g. `/entities/{entity_type}/{id}`; also the metrics and log label. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthMode;
  /** Per-token rate limiting; on by default for authenticated calls. */
  rateLimited?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Query parameters documented but validated elsewhere (the WebSocket upgrade). */
  docQuery?: z.ZodObject;
  /** The body as documented when `body` validates less (a batch's requests are checked by records, in order). */
  docBody?: z.ZodType;
  /** Path parameters documented but read by the handler itself (a key spanning several segments). */
  docParams?: z.ZodObject;
  /** The express path when `path` cannot say it (`/media/*key`: a parameter holding slashes). */
  expressPath?: string;
  /** Request headers the handler reads, documented as parameters (If-Match, ...). */
  headerParams?: HeaderParam[];
  /**
   * Body media types other than JSON that the handler reads from the request stream itself
   * (`req.is` patterns). Any other non-JSON body is a 415.
   */
  bodyTypes?: string[];
  /** A JSON body limit of this route below the gateway's BODY_LIMIT_BYTES (larger bodies: 413). */
  bodyLimitBytes?: number;
  /**
   * Whether the answer of a POST with an `Idempotency-Key` is stored and replayed (default true:
   * a write). False for a read-only POST (a query, a summary, a listing) and for one whose answer
   * carries a credential or a lease (a token, a key, a share link's token, a farm or sitesync
   * claim): its key is checked but nothing is stored, and a repeat runs again. A function decides
   * from the validated body (a sync import's `dry_run` writes nothing). docs/api-notes.md,
   * "Idempotent retries".
   */
  replayable?: boolean | ((body: Out<B>) => boolean);
  /**
   * The write carries its Idempotency-Key to records itself (docs/architecture.md, "Idempotency
   * keys"): the router claims and finishes nothing; it sets `locals.keyedWrite`, which the handler
   * passes with its one records call, and the handler answers `keyedAnswer(response.key, ...)`; the
   * router maps the key's outcome as for any other key. A function decides from the validated path
   * parameters (a User create is written by auth: its key is claimed and finished around it).
   */
  keyInWrite?: boolean | ((params: Out<P>) => boolean);
  /**
   * The request's weight in the caller's rate limit, from the validated body (default 1): a batch
   * counts its requests, an import its items (docs/api-notes.md, "Rate limits").
   */
  cost?: (body: Out<B>) => number;
  /**
   * The roles that may call the route whatever its input (`{ roles, to }`, domain/role.rule.ts):
   * any other role is 403 `forbidden` after authentication and before validation, with the message
   * `to` completes; the OpenAPI text lists the roles. Unset: every authenticated caller.
   */
  allow?: RoleRule;
  /**
   * An agent API key (`"scope": "agent"`, docs/api-notes.md "Authentication") may call the route: true
   * only on the farm and sitesync agent routes (claims, chunk heartbeat, complete and fail, a job's
   * read, a state's report). Every other route refuses an agent key with 403 `forbidden` after
   * authentication and the rate limit, before `allow` (domain/role.rule.ts, `assertAgentMay`); the
   * OpenAPI operation of an agent route says so (`x-agent-key: true` and a sentence).
   */
  agent?: boolean;
  /**
   * A role check that depends on the input (the entity type, the user of the path): throws a
   * `forbidden` AppError. Runs after authentication and `allow`, before validation. The checks
   * live in routes/route.roles.ts.
   */
  authorize?: (principal: AuthedPrincipal, raw: RawInput) => void;
  /**
   * The check of an `optional` route called without a token, in `authorize`'s place (before
   * the body is looked at): throws a `forbidden` AppError when anonymous callers may not, or a
   * `rate_limited` one for a per-resource limit of a public route.
   */
  authorizeAnonymous?: (ctx: CallContext, raw: RawInput) => Promise<void>;
  responses: Record<number, RouteResponse>;
  /** Further documented error statuses (404, 409, 503, ...). */
  errors?: number[];
  handler: (input: RouteInput<Out<P>, Out<Q>, Out<B>>) => unknown;
}

export type AnyRoute = RouteDef<any, any, any>;

/** Identity helper that infers the handler's input types from the schemas. */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}

/** A handler result with a status, headers or a pre-serialised JSON body. */
export class Reply {
  private constructor(
    readonly status: number,
    readonly body: unknown,
    readonly raw: boolean,
    readonly headers?: Record<string, string>,
    readonly contentType?: string,
  ) {}

  /** A JSON body serialised by express. */
  static json(body: unknown, status = 200, headers?: Record<string, string>): Reply {
    return new Reply(status, body, false, headers);
  }

  /** A body that is already JSON text (saves a parse and re-serialise on hot paths). */
  static rawJson(text: string, status = 200, headers?: Record<string, string>): Reply {
    return new Reply(status, text, true, headers, 'application/json; charset=utf-8');
  }

  /** Any other content type. */
  static text(text: string, contentType: string, status = 200): Reply {
    return new Reply(status, text, true, undefined, contentType);
  }
}

/** `/a/{b}/c` → `/a/:b/c` for express. */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}
