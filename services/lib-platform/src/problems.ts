/**
 * The bounds of a 422's problem list (docs/api-notes.md, Errors): at most {@link MAX_PROBLEMS}
 * entries, then one `too_many_errors` entry counting the rest, and no echoed input longer than
 * {@link MAX_ECHO_CHARS} characters. Every service caps its list where it makes it
 * ({@link AppError.invalid}), so a body with thousands of bad keys, or one key of a megabyte,
 * still answers a short 422 that crosses the internal hop whole.
 */

/** One validation problem, in the shape of the 422 body (docs/api-notes.md, Errors). */
export interface Problem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** How many problems a 422 lists (the gateway's `MAX_PROBLEMS` default). */
export const MAX_PROBLEMS = 100;

/** Input echoed in a problem (a key in `loc`, a value or key in `msg`) keeps this many characters. */
export const MAX_ECHO_CHARS = 200;

/** A problem's `msg` keeps at most this many characters (its echoed input already clipped). */
export const MAX_MSG_CHARS = 400;

/** Ends a clipped string. */
export const ELLIPSIS = '…';

const SOURCES: ReadonlySet<unknown> = new Set(['body', 'query', 'path']);

/** The `msg` of the entry that counts left-out problems. */
export function tooManyMsg(more: number, max: number): string {
  return `${more} more problem${more === 1 ? '' : 's'} not listed (at most ${max} are)`;
}

/** How many problems a `too_many_errors` entry says were left out (0 for any other entry). */
export function leftOutBy(p: Problem | undefined): number {
  if (p?.type !== 'too_many_errors') return 0;
  const n = /^(\d+) more problem/.exec(p.msg);
  return n ? Number(n[1]) : 0;
}

/**
 * `s` unchanged when it has at most `max` characters, else its first `max` (never half of a
 * surrogate pair) followed by {@link ELLIPSIS}.
 */
export function clipEcho(s: string, max = MAX_ECHO_CHARS): string {
  if (s.length <= max) return s;
  let end = max;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return s.slice(0, end) + ELLIPSIS;
}

function clipProblem(p: Problem): Problem {
  const long = p.msg.length > MAX_MSG_CHARS || p.loc.some((part) => typeof part === 'string' && part.length > MAX_ECHO_CHARS);
  if (!long) return p;
  return {
    loc: p.loc.map((part) => (typeof part === 'string' ? clipEcho(part) : part)),
    msg: clipEcho(p.msg, MAX_MSG_CHARS),
    type: p.type,
  };
}

/**
 * The first `max` problems, each with its `loc` parts and `msg` clipped, then, when there were
 * more, one entry `{"loc": [<source>], "msg": "<n> more problems not listed (at most <max> are)",
 * "type": "too_many_errors"}`. `<source>` is the head of the first problem left out when it is
 * `body`, `query` or `path`; services leave it empty and the gateway puts the source there.
 * A list that already ends with such an entry (capped by the service that made it) is capped
 * again with its count carried over.
 */
export function capProblems(problems: readonly Problem[], max = MAX_PROBLEMS): Problem[] {
  let list = problems;
  let carried = 0;
  const tail = list[list.length - 1];
  if (tail?.type === 'too_many_errors') {
    carried = leftOutBy(tail);
    list = list.slice(0, -1);
  }
  const kept = list.slice(0, max).map(clipProblem);
  const more = list.length - kept.length + carried;
  if (more === 0) return kept;
  const head = (list[max] ?? tail)?.loc[0];
  return [...kept, { loc: SOURCES.has(head) ? [head as string] : [], msg: tooManyMsg(more, max), type: 'too_many_errors' }];
}
