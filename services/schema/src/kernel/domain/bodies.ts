/**
 * The bodies of the schema service's routes are checked again here (the gateway validates them
 * first, with the same rules: lib-platform's `schemaBodies` and policies, docs/api-notes.md), as
 * the service never trusts a caller's input. A body arrives decoded from its typed message, or as
 * JSON text (the deprecated JSON fields, for one release; docs/architecture.md, "Protocol
 * buffers"). A problem is a 422 naming its place, all problems at once.
 */
import { AppError, type Problem } from '@reelbase/lib-platform';
import type { z } from 'zod';

/** A request body: decoded already (from its typed message), or JSON text (empty = `{}`). */
export type BodyInput = string | Record<string, unknown>;

/** Problems of a zod failure, located under `body`. */
function problemsOf(error: z.ZodError): Problem[] {
  const out: Problem[] = [];
  for (const issue of error.issues) {
    const loc = ['body', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ loc, msg: 'Field required', type: 'missing' });
    } else {
      out.push({ loc, msg: issue.message, type: issue.code === 'invalid_type' ? `${issue.expected}_type` : 'value_error' });
    }
  }
  return out;
}

/** The value of `body`: JSON text decoded (422 `json_invalid` when it is not JSON), else as it is. */
export function decodeBody(body: BodyInput): unknown {
  if (typeof body !== 'string') return body;
  try {
    return body.trim() === '' ? {} : JSON.parse(body);
  } catch {
    throw AppError.invalid([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
}

/** `body` decoded and checked against `schema`; 422 with every problem otherwise. */
export function parseBody<S extends z.ZodType>(schema: S, body: BodyInput): z.infer<S> {
  const res = schema.safeParse(decodeBody(body));
  if (!res.success) throw AppError.invalid(problemsOf(res.error));
  return res.data;
}

/** The bytes of `body` as JSON text (a decoded body as the gateway's JSON of it). */
export function bodyBytes(body: BodyInput): number {
  return Buffer.byteLength(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}
