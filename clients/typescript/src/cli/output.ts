/**
 * What the command prints: tables for people, JSON for scripts (`--json`), and the exit codes a
 * script can test (documented in README.md and `reelbase --help`).
 */
import {
  ConnectionError,
  Conflict,
  NotFound,
  PermissionDenied,
  AuthenticationError,
  ReelbaseError,
  ValidationError,
  PayloadTooLarge,
  BadRequest,
} from '../errors.js';

/** Exit codes of `reelbase`. */
export const EXIT = {
  ok: 0,
  /** Any other failure (a server error, an unexpected answer). */
  error: 1,
  /** Wrong arguments or options. */
  usage: 2,
  /** The record, route or launch request does not exist (404). */
  notFound: 3,
  /** Not logged in, a bad key, or the role may not do this (401, 403). */
  auth: 4,
  /** The server refused the request as invalid or conflicting (400, 409, 413, 422). */
  rejected: 5,
  /** The server could not be reached or did not answer in time. */
  unreachable: 6,
  /** What was waited for or run failed (a reviewable that failed, a launched program, a farm command). */
  failed: 7,
  /** Stopped by Ctrl-C. */
  interrupted: 130,
} as const;

export const EXIT_HELP = `Exit codes:
  0    success
  1    error (server error, unexpected answer)
  2    usage (wrong arguments or options)
  3    not found (404)
  4    authentication or permission (401, 403)
  5    rejected as invalid or conflicting (400, 409, 413, 422)
  6    server unreachable or no answer in time
  7    the awaited work failed (a reviewable, a launched program)
  130  interrupted`;

/** A failure with the exit code to end with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof NotFound) return EXIT.notFound;
  if (err instanceof AuthenticationError || err instanceof PermissionDenied) return EXIT.auth;
  if (err instanceof ValidationError || err instanceof Conflict || err instanceof PayloadTooLarge || err instanceof BadRequest) return EXIT.rejected;
  if (err instanceof ConnectionError) return EXIT.unreachable;
  return EXIT.error;
}

/** The error as JSON for `--json` (no credentials ever). */
export function errorJson(err: unknown): Record<string, unknown> {
  if (err instanceof ReelbaseError) {
    return {
      error: {
        status: err.status,
        code: err.code,
        detail: err.detail,
        ...(err instanceof ValidationError ? { problems: err.problems } : {}),
        ...(err.requestId ? { request_id: err.requestId } : {}),
      },
    };
  }
  return { error: { code: err instanceof CliError ? 'cli_error' : 'error', detail: err instanceof Error ? err.message : String(err) } };
}

/** The error for people, problems one per line. */
export function errorText(err: unknown): string {
  if (err instanceof ValidationError) {
    const lines = err.problems.map((p) => `  ${p.loc.join('.')}: ${p.msg}`);
    return `error: the request is not valid (422)\n${lines.join('\n')}`;
  }
  if (err instanceof ReelbaseError) return `error: ${err.detail}${err.status ? ` (${err.status} ${err.code})` : ` (${err.code})`}`;
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/** A cell: strings as they are, links as Type:id, objects as compact JSON, cut to `max` characters. */
export function cell(v: unknown, max = 48): string {
  let s: string;
  if (v === null || v === undefined) s = '';
  else if (typeof v === 'string') s = v;
  else if (typeof v === 'object' && !Array.isArray(v) && 'type' in v && 'id' in v)
    s = `${String((v as { type: unknown }).type)}:${String((v as { id: unknown }).id)}`;
  else s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  s = s.replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A plain-text table with a header row. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}

/** A record flattened for a table: its columns and its data fields side by side. */
export function flatRecord(r: { data?: Record<string, unknown> } & Record<string, unknown>): Record<string, unknown> {
  const { data, ...columns } = r;
  return { ...data, ...columns };
}

/** Key: value lines of one record (columns, then data fields). */
export function describe(r: Record<string, unknown>): string {
  const { data, ...columns } = r as { data?: Record<string, unknown> };
  const entries = [...Object.entries(columns), ...Object.entries(data ?? {})];
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${cell(v, 200)}`).join('\n');
}
