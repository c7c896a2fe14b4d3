/**
 * One generic check of every parsed JSON body and query string, before route validation:
 * characters PostgreSQL cannot store (NUL in text and jsonb, lone UTF-16 surrogates in jsonb)
 * and nesting deep enough to overflow the stack of recursive code further on
 * (`JSON.stringify`, zod, the services). Without it these client mistakes surface as 500s.
 *
 * The walk is iterative and allocates one small frame per container only, so it stays cheap
 * on the hot path; paths are rebuilt from parent links only when a problem is found.
 */
import type { Problem } from '@reelbase/lib-platform';
import type { Source } from './validation.js';

/** Deepest container nesting accepted; the top-level value is depth 1. */
export const MAX_JSON_DEPTH = 64;

/** Problems reported per request at most; a hostile body must not yield a huge 422. */
const MAX_PROBLEMS = 20;

interface Frame {
  value: object;
  key: string | number | undefined;
  parent: Frame | undefined;
  depth: number;
}

type Loc = (string | number)[];

function locOf(frame: Frame | undefined, source: Source, last?: string | number): Loc {
  const keys: (string | number)[] = last === undefined ? [] : [last];
  for (let f = frame; f?.key !== undefined; f = f.parent) keys.push(f.key);
  keys.push(source);
  return keys.reverse();
}

/** Why a string may not be stored, or undefined when it is fine. */
function badCharacter(s: string): string | undefined {
  if (s.includes('\u0000')) return 'the NUL character (\\u0000)';
  if (!(s as string & { isWellFormed(): boolean }).isWellFormed()) return 'a lone UTF-16 surrogate';
  return undefined;
}

/**
 * Walks `value` (a parsed JSON body, or a parsed query) and appends a problem for every string
 * or key holding a character that cannot be stored, and for every container nested deeper than
 * {@link MAX_JSON_DEPTH} (not walked further). Returns how many problems it added.
 */
export function inspectJson(value: unknown, source: Source, problems: Problem[]): number {
  const before = problems.length;
  const add = (loc: Loc, msg: string, type: string): boolean => {
    problems.push({ loc, msg, type });
    return problems.length - before >= MAX_PROBLEMS;
  };
  if (typeof value === 'string') {
    const why = badCharacter(value);
    if (why) add([source], `String should not contain ${why}`, 'string_invalid_character');
    return problems.length - before;
  }
  if (value === null || typeof value !== 'object') return 0;

  const stack: Frame[] = [{ value, key: undefined, parent: undefined, depth: 1 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_JSON_DEPTH) {
      if (add(locOf(frame, source), `Input should be nested at most ${MAX_JSON_DEPTH} levels deep`, 'too_deep')) break;
      continue;
    }
    const container = frame.value;
    const isArray = Array.isArray(container);
    const keys = isArray ? undefined : Object.keys(container);
    const n = isArray ? container.length : keys!.length;
    for (let i = 0; i < n; i++) {
      const key: string | number = isArray ? i : keys![i]!;
      if (!isArray) {
        const why = badCharacter(key as string);
        if (why && add(locOf(frame, source, key), `Keys should not contain ${why}`, 'string_invalid_character')) return problems.length - before;
      }
      const child: unknown = (container as Record<string | number, unknown>)[key];
      if (typeof child === 'string') {
        const why = badCharacter(child);
        if (why && add(locOf(frame, source, key), `String should not contain ${why}`, 'string_invalid_character')) return problems.length - before;
      } else if (child !== null && typeof child === 'object') {
        stack.push({ value: child, key, parent: frame, depth: frame.depth + 1 });
      }
    }
  }
  return problems.length - before;
}
