/**
 * The bodies of the schema routes are checked again here against the operations table's schemas
 * (lib-platform's `schemaBodies`, docs/api-notes.md "Schema"): the gateway validates them first,
 * but the service never trusts a caller's JSON. A problem is a 422 naming its place, all problems
 * at once.
 */
import { AppError, type Problem } from '@reelbase/lib-platform';
import { z } from 'zod';

/** Where the service POSTs to (custom actions, scheduled webhooks): http or https, no credentials. */
export const OutboundUrl = z
  .string()
  .max(2048)
  .refine((raw) => {
    try {
      const u = new URL(raw);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && u.hostname !== '';
    } catch {
      return false;
    }
  }, 'an http or https URL without a user name or password');

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

/** Decodes `json` (empty = `{}`) and checks it against `schema`; 422 with every problem otherwise. */
export function parseBody<S extends z.ZodType>(schema: S, json: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = json.trim() === '' ? {} : JSON.parse(json);
  } catch {
    throw AppError.invalid([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
  const res = schema.safeParse(raw);
  if (!res.success) throw AppError.invalid(problemsOf(res.error));
  return res.data;
}
