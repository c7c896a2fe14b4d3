/**
 * Mounts route definitions on express with the order of checks (docs/api-notes.md):
 * authentication (401) → rate limit (429) → an agent key off its routes, then role (403) → body
 * and query checks (415, 413, 422) → the handler, whose services decide existence (404) and
 * conflicts (409). Paths that exist with another method answer 405.
 */
import { AppError, isAppError, type Logger, type Problem } from '@reelbase/lib-platform';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { AuthCache, AuthEntry } from '../domain/auth.cache.js';
import type { RateLimiter } from '../domain/rate.limiter.js';
import { assertAgentMay, assertAllowed } from '../domain/role.rule.js';
import { clientAddress } from './client.address.js';
import { toHttpError, requestShape } from './error.mapper.js';
import {
  bodyHashOf,
  claimKey,
  idempotencyKeyOf,
  isKept,
  keyedWriteOf,
  KeyWaiters,
  keptHeaders,
  MAX_KEYS,
  principalOf,
  REPLAYED_HEADER,
  scopeOf,
  writeWithKey,
  type Answer,
  type IdempotencyClient,
} from './idempotency.js';
import { inspectJson } from './json.guard.js';
import { localsOf, type GatewayLocals } from './locals.js';
import { Reply, expressPath, type AnyRoute } from './route.js';
import { collect, DEFAULT_MAX_PROBLEMS, invalidOf } from './validation.js';

export interface RouterDeps {
  auth: AuthCache;
  /** Requests per principal (user or API key). */
  limiter: RateLimiter;
  /** Requests with a refused credential per client address; unset: not limited. */
  authFailures?: RateLimiter;
  /** Trusted proxy hops in X-Forwarded-For (see client.address.ts). */
  trustProxyHops?: number;
  /** Problems listed in a 422 at most. */
  maxProblems?: number;
  bodyLimitBytes: number;
  /** Where idempotency keys are kept (records' IdempotencyService); unset: a POST with a key is 503. */
  idempotency?: IdempotencyClient;
  /** Live idempotency keys a principal may hold (`IDEMPOTENCY_MAX_KEYS`; default 10,000; 0: no limit). */
  maxIdempotencyKeys?: number;
  logger?: Logger;
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
const EMPTY: Record<string, never> = Object.freeze({}) as Record<string, never>;
/** `req.is` patterns of JSON: application/json and every `+json` suffix type. */
const JSON_TYPES = ['application/json', '+json'];

/** A body in a media type the route does not read: 415 through the error mapper. */
class UnsupportedMediaType extends Error {
  readonly status = 415;
  readonly expose = true;
}

/**
 * The body of a route without a body schema: none, or an empty JSON object. Anything else
 * would be ignored silently, so every key is reported like an unknown key of a schema.
 */
function unexpectedBody(body: unknown, problems: Problem[]): void {
  if (body === undefined) return;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    problems.push({ loc: ['body'], msg: 'Input should be a valid dictionary or object', type: 'dict_type' });
    return;
  }
  for (const key of Object.keys(body)) problems.push({ loc: ['body', key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
}

/** Sends a handler's result. */
function send(res: Response, out: unknown): void {
  if (out instanceof Reply) {
    if (out.headers) res.set(out.headers);
    res.status(out.status);
    if (out.raw) {
      res.setHeader('content-type', out.contentType ?? 'application/json; charset=utf-8');
      res.send(out.body as string);
    } else {
      res.json(out.body);
    }
    return;
  }
  res.json(out);
}

/** Sends a stored answer again. */
function replay(res: Response, { status, headers, body }: Answer): void {
  res.status(status).set(headers).set(REPLAYED_HEADER, 'true').send(body);
}

/** The answer `out` sends, as stored for an idempotency key; undefined when it cannot be told. */
function answerOf(out: unknown): Answer | undefined {
  if (out instanceof Reply) {
    const body = out.raw ? String(out.body) : (JSON.stringify(out.body) ?? '');
    const type = out.raw ? (out.contentType ?? 'application/json; charset=utf-8') : 'application/json; charset=utf-8';
    return { status: out.status, headers: { ...keptHeaders(out.headers ?? {}), 'content-type': type }, body };
  }
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(out) ?? '' };
}

/** The bearer token of a request, or undefined when no Authorization header was sent. */
function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const m = BEARER.exec(header);
  if (!m) throw new AppError('unauthenticated', 'the Authorization header must be "Bearer <token>"');
  return m[1];
}

/**
 * Resolves the request's credential. A client address whose refused credentials used up
 * their allowance gets 429 before auth is asked again (a token already known to be valid
 * still passes, so one bad client behind a shared address does not lock the others out);
 * every refusal takes from that allowance.
 */
async function authenticate(req: Request, locals: GatewayLocals, deps: RouterDeps): Promise<AuthEntry | undefined> {
  const failures = deps.authFailures;
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const addr = failures ? clientAddress(req, deps.trustProxyHops ?? 0) : '';
  const match = BEARER.exec(header);
  if (failures && !(match && deps.auth.hasValid(match[1]!))) {
    const wait = failures.peek(addr);
    if (wait > 0) throw new AppError('rate_limited', 'too many requests with invalid credentials from this address', { retryAfter: Math.ceil(wait) });
  }
  try {
    const token = bearerToken(req)!;
    return await deps.auth.authenticate(token, locals.ctx);
  } catch (err) {
    if (failures && isAppError(err) && err.kind === 'unauthenticated') failures.take(addr);
    throw err;
  }
}

/**
 * The answer was given but could not be stored: the key stays claimed until its lease runs
 * out, then a retry with the same body runs again (docs/api-notes.md, "Idempotent retries").
 */
function forgetful(deps: RouterDeps, locals: GatewayLocals, err: unknown): void {
  deps.logger?.warn({ err, request_id: locals.requestId }, 'the answer of an idempotency key could not be stored');
}

/** Builds the one express handler that runs a route's pipeline. */
function pipeline(route: AnyRoute, deps: RouterDeps, waiters: KeyWaiters): RequestHandler {
  const rateLimited = route.rateLimited ?? true;
  const maxProblems = deps.maxProblems ?? DEFAULT_MAX_PROBLEMS;
  return async (req, res) => {
    const locals = localsOf(res);
    locals.routeLabel = route.path;
    if (route.auth !== 'public') {
      const entry = await authenticate(req, locals, deps);
      if (entry === undefined) {
        if (route.auth === 'bearer') throw new AppError('unauthenticated', 'a bearer token is required');
      } else {
        locals.principal = entry.principal;
        locals.tokenHash = entry.hash;
        locals.ctx.principal = entry.principal;
        if (rateLimited) {
          // One bucket per user or API key, however the token is spelled.
          locals.rateKey = entry.rateKey;
          const wait = deps.limiter.take(entry.rateKey);
          if (wait > 0) throw new AppError('rate_limited', 'too many requests for this credential', { retryAfter: Math.ceil(wait) });
        }
      }
    }
    if (locals.principal) assertAgentMay(locals.principal, route.agent === true);
    if (route.allow && locals.principal) assertAllowed(locals.principal, route.allow);
    if (route.authorize && locals.principal) {
      route.authorize(locals.principal, {
        params: req.params as Record<string, string>,
        body: locals.bodyError ? undefined : req.body,
        query: req.query as Record<string, unknown>,
      });
    }
    if (route.authorizeAnonymous && !locals.principal) {
      await route.authorizeAnonymous(locals.ctx, { params: req.params as Record<string, string>, body: locals.bodyError ? undefined : req.body });
    }
    if (locals.bodyError) throw locals.bodyError;

    const problems: Problem[] = [];
    const rawQuery: unknown = req.query;
    // Unstorable characters and runaway nesting first: the schemas below assume neither.
    inspectJson(rawQuery, 'query', problems);
    if (req.body !== undefined) inspectJson(req.body, 'body', problems);
    if (problems.length > 0) throw invalidOf(problems, maxProblems);

    const params = route.params ? collect(route.params, req.params, 'path', problems) : EMPTY;
    const query = route.query ? collect(route.query, rawQuery, 'query', problems) : EMPTY;
    let body: unknown;
    if (route.body) body = collect(route.body, req.body ?? {}, 'body', problems);
    else unexpectedBody(req.body, problems);
    const key = route.method === 'post' ? idempotencyKeyOf(req, problems) : undefined;
    if (problems.length > 0) throw invalidOf(problems, maxProblems);
    // A request that does the work of many (a batch, an import) takes the rest of its weight now
    // that its body is known; the balance may go below zero, so the caller's next requests wait.
    if (route.cost && rateLimited && locals.rateKey !== undefined) {
      const extra = route.cost(body) - 1;
      if (extra > 0) deps.limiter.charge(locals.rateKey, extra);
    }

    const run = () => route.handler({ params, query, body, ctx: locals.ctx, principal: locals.principal, req, res });
    // A streamed body (an upload) is never held; a read-only answer, or one holding a credential
    // or a lease, is never stored (its key was checked above, and the request runs again).
    const stored = typeof route.replayable === 'function' ? route.replayable(body) : route.replayable !== false;
    if (key === undefined || !stored || route.bodyTypes !== undefined) {
      const out = await run();
      if (!res.headersSent) send(res, out);
      return;
    }
    if (!deps.idempotency) throw AppError.unavailable('idempotency keys cannot be kept by this gateway');
    // A guest is known by the share link in the path; everyone else by their user id.
    const userId = locals.principal?.userId;
    const who = userId ? `user:${userId}` : 'anonymous';
    const want = {
      scope: scopeOf(who, req.method, req.path, key),
      bodyHash: bodyHashOf(req.body, req.query),
      principal: principalOf(userId, req.path),
      maxKeys: deps.maxIdempotencyKeys ?? MAX_KEYS,
    };
    if (typeof route.keyInWrite === 'function' ? route.keyInWrite(params) : route.keyInWrite === true) {
      // The write carries its key: its one records call claims it, writes and stores the answer (a kept
      // error's too), so nothing is finished or released here.
      const shape = requestShape(route.path, req.query, req.method);
      locals.keyedWrite = keyedWriteOf(want, shape.pathParams, shape.queryParams);
      const written = await writeWithKey(run, want, waiters);
      if ('replay' in written) replay(res, written.replay);
      else if (!res.headersSent) send(res, written.done);
      return;
    }
    const claim = await claimKey(deps.idempotency, want, locals.ctx, waiters);
    if ('replay' in claim) {
      replay(res, claim.replay);
      return;
    }
    let out: unknown;
    try {
      out = await run();
    } catch (err) {
      const mapped = toHttpError(err, requestShape(route.path, req.query, req.method));
      if (isKept(mapped.status)) {
        const headers = { ...keptHeaders(mapped.headers ?? {}), 'content-type': 'application/json; charset=utf-8' };
        await claim.claimed.finish({ status: mapped.status, headers, body: JSON.stringify(mapped.body) }).catch((e: unknown) => forgetful(deps, locals, e));
      } else {
        await claim.claimed.release().catch((e: unknown) => forgetful(deps, locals, e));
      }
      throw err;
    }
    const answer = res.headersSent ? undefined : answerOf(out);
    if (answer && isKept(answer.status)) await claim.claimed.finish(answer).catch((e: unknown) => forgetful(deps, locals, e));
    else await claim.claimed.release().catch((e: unknown) => forgetful(deps, locals, e));
    if (!res.headersSent) send(res, out);
  };
}

/** Mounts `routes` on `app`, then a 405 for known paths with an unknown method. */
export function mountRoutes(app: Express, routes: readonly AnyRoute[], deps: RouterDeps): void {
  const json = express.json({ limit: deps.bodyLimitBytes, type: () => true, strict: true });
  /**
   * Reads a JSON body on every route (a body a route does not take is a 422, not ignored).
   * Failures are held back so that a bad token (401) or a forbidden role (403) wins over a
   * malformed body. A body without a Content-Type is read as JSON; one in another type is a
   * 415 unless the route declares that type in `bodyTypes` (and reads the stream itself).
   */
  const deferredBody = (route: AnyRoute): RequestHandler => {
    const own = route.bodyTypes ?? [];
    const parse =
      route.bodyLimitBytes !== undefined && route.bodyLimitBytes < deps.bodyLimitBytes
        ? express.json({ limit: route.bodyLimitBytes, type: () => true, strict: true })
        : json;
    return (req, res, next) => {
      const isJson = req.is(JSON_TYPES);
      if (isJson === null) return next(); // no body at all
      if (!isJson && req.headers['content-type'] !== undefined) {
        if (own.length > 0 && req.is(own)) return next();
        if (req.headers['content-length'] !== '0') {
          localsOf(res).bodyError = new UnsupportedMediaType(
            `a request body must be JSON (Content-Type: application/json), not ${req.headers['content-type']}`,
          );
        }
        return next();
      }
      parse(req, res, (err?: unknown) => {
        if (err) localsOf(res).bodyError = err;
        next();
      });
    };
  };
  const methodsByPath = new Map<string, Set<string>>();
  const pathOf = (route: AnyRoute) => route.expressPath ?? expressPath(route.path);
  const waiters = new KeyWaiters();
  for (const route of routes) {
    const path = pathOf(route);
    app[route.method](path, deferredBody(route), pipeline(route, deps, waiters));
    let methods = methodsByPath.get(path);
    if (!methods) methodsByPath.set(path, (methods = new Set()));
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
  }
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods].join(', ');
    const template = routes.find((r) => pathOf(r) === path)?.path ?? path;
    app.all(path, (req, res) => {
      localsOf(res).routeLabel = template;
      res
        .status(405)
        .set('allow', allow)
        .json({ detail: `${req.method} is not allowed here; use ${allow}`, code: 'method_not_allowed' });
    });
  }
}
