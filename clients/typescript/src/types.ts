/**
 * Types of the API, derived from the generated `paths` and `components` (src/generated/api.ts,
 * built from the gateway's OpenAPI document): request bodies, path and query parameters and
 * answers of every route, so a wrong body does not compile.
 */
import type { components, paths } from './generated/api.js';

export type { components, paths };

/** The named schemas of the OpenAPI document. */
export type Schemas = components['schemas'];
/** A record as every route returns it. */
export type EntityRecord = Schemas['Record'];
/** An event of the log. */
export type ReelEvent = Schemas['Event'];

export type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The paths that have an operation for `M`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

/** The operation object of `M` on `P`. */
export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** The JSON request body of the operation (never when it takes none). */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The path parameters of the operation. */
export type PathParams<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { path: infer X } } ? X : never;

/** The query parameters of the operation. */
export type QueryParams<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? ([Q] extends [undefined] ? never : NonNullable<Q>) : never;

/** The JSON body of the operation's 200 answer (undefined when it has none, e.g. a 204). */
export type ResponseBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : undefined;

/** The options of a typed call: `params` fill `{name}` in the path; `body` is type-checked against the route. */
export type CallOptions<P extends keyof paths, M extends Method> = {
  query?: QueryParams<P, M>;
  body?: RequestBody<P, M>;
  headers?: Record<string, string>;
  /** The Idempotency-Key of a POST (one is made up when absent). */
  idempotencyKey?: string;
} & ([PathParams<P, M>] extends [never] ? { params?: undefined } : { params: PathParams<P, M> });
