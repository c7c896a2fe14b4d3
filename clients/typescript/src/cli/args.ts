/**
 * The arguments of the `reelbase` command that need more than commander gives: `key=value` data,
 * `--where` filters, `--order` lists, whole numbers, and the refusal of credentials as arguments.
 */
import type { Filters } from '../client.options.js';
import { CliError, EXIT } from './output.js';

/** The refusal of a credential given as a command-line argument, naming the safe ways to give it. */
export function argumentRefused(option: string, what: string, safe: string): CliError {
  return new CliError(
    `${option} is refused: a ${what} on the command line is visible to every user of this machine (ps) and kept in the shell's history; ` +
      `give it with ${safe}${what === 'password' ? ' (change it if others share this machine)' : ' (revoke it if others share this machine)'}`,
    EXIT.usage,
  );
}

/** `value` as JSON when it parses, else the text itself (so `code=SH010` and `cut_in=1001` both work). */
export function jsonOrText(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** `key=value` arguments into an object (values JSON when they parse). */
export function assignments(pairs: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new CliError(`expected key=value, got ${JSON.stringify(p)}`, EXIT.usage);
    out[p.slice(0, i)] = jsonOrText(p.slice(i + 1));
  }
  return out;
}

export function parseJsonOption(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${what} is not JSON: ${(err as Error).message}`, EXIT.usage);
  }
}

/** Filters from `--filters JSON` and each `--where 'path op value'` / `--where path=value`. */
export function buildFilters(filtersJson: string | undefined, where: string[]): Filters {
  const items: unknown[] = [];
  if (filtersJson) {
    const f = parseJsonOption(filtersJson, '--filters');
    if (Array.isArray(f)) items.push(...(f as unknown[]));
    else items.push(f);
  }
  for (const w of where) {
    const m = /^\s*(\S+)\s+(\S+)\s+(.*)$/.exec(w);
    if (m && !w.slice(0, w.indexOf(' ')).includes('=')) items.push([m[1], m[2], jsonOrText(m[3]!)]);
    else {
      const i = w.indexOf('=');
      if (i <= 0) throw new CliError(`--where takes 'path=value' or 'path operator value', got ${JSON.stringify(w)}`, EXIT.usage);
      items.push([w.slice(0, i).trim(), 'is', jsonOrText(w.slice(i + 1).trim())]);
    }
  }
  return items as Filters;
}

/** `code,-created_at` into an order list. */
export function buildOrder(order: string | undefined): { field: string; direction: 'asc' | 'desc' }[] | undefined {
  if (!order) return undefined;
  return order
    .split(',')
    .filter(Boolean)
    .map((f) => (f.startsWith('-') ? { field: f.slice(1), direction: 'desc' as const } : { field: f, direction: 'asc' as const }));
}

export const collect = (v: string, prev: string[]) => [...prev, v];
export const intArg = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} takes a whole number, got ${JSON.stringify(v)}`, EXIT.usage);
  return n;
};
