/**
 * The floor of the write path: pgbench running the same record + outbox transaction
 * (transaction.sql.ts) straight against PostgreSQL, no HTTP, no application.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMeasured } from './command.runner.js';
import { bindText, insertOutboxSql, insertRecordSql, outboxParams, recordParams, sqlLiteral, type CreateInput } from './transaction.sql.js';

/** pgbench variable prefix for the columns of the created record (`\gset rec_`). */
const VAR_PREFIX = 'rec_';
/** Index of the entity id ($3) among insertOutboxSql's parameters. */
const ENTITY_ID_PARAM = 2;

/** What pgbench reported for one run. */
export interface PgbenchResult {
  tps: number;
  transactions: number;
  failed: number;
  latencyAvgMs: number | null;
}

/** One measured pgbench run plus the CPU pgbench itself used. */
export interface PgbenchRun extends PgbenchResult {
  clients: number;
  seconds: number;
  cpuSeconds: number | null;
}

/**
 * The pgbench script: BEGIN; the record insert (its row lands in `:rec_*` variables);
 * the outbox insert naming `:rec_id`; COMMIT. Four round trips, like the baseline.
 */
export function pgbenchScript(schema: string, input: CreateInput): string {
  const record = bindText(insertRecordSql(schema), recordParams(input).map(sqlLiteral));
  const outboxValues = outboxParams(input, '').map(sqlLiteral);
  outboxValues[ENTITY_ID_PARAM] = `':${VAR_PREFIX}id'`;
  const outbox = bindText(insertOutboxSql(schema), outboxValues);
  // pgbench substitutes `:name` anywhere in the text, quotes included: a literal must not
  // contain one of our variable names.
  const literals = [...recordParams(input), ...outboxParams(input, '')].join(' ');
  if (literals.includes(`:${VAR_PREFIX}`)) throw new Error(`literal values must not contain ":${VAR_PREFIX}"`);
  return ['BEGIN;', `${record} \\gset ${VAR_PREFIX}`, `${outbox};`, 'COMMIT;', ''].join('\n');
}

/** Parses pgbench's summary. Throws when the run was aborted or the tps line is missing. */
export function parsePgbench(output: string): PgbenchResult {
  if (/Run was aborted/i.test(output)) throw new Error(`pgbench run was aborted:\n${errorLines(output)}`);
  const tps = /^tps = ([\d.]+) \(without initial connection time\)/m.exec(output);
  if (!tps) throw new Error(`no "tps = ... (without initial connection time)" line in pgbench output:\n${output.slice(-2000)}`);
  const processed = /^number of transactions actually processed: (\d+)/m.exec(output);
  const failed = /^number of failed transactions: (\d+)/m.exec(output);
  const latency = /^latency average = ([\d.]+) ms/m.exec(output);
  return {
    tps: Number(tps[1]),
    transactions: processed ? Number(processed[1]) : 0,
    failed: failed ? Number(failed[1]) : 0,
    latencyAvgMs: latency ? Number(latency[1]) : null,
  };
}

function errorLines(output: string): string {
  return output
    .split('\n')
    .filter((l) => /error|FATAL|aborted/i.test(l))
    .slice(0, 10)
    .join('\n');
}

/** Writes the script into `dir` and runs pgbench for `seconds` with `clients` connections. */
export async function runPgbench(opts: {
  databaseUrl: string;
  clients: number;
  seconds: number;
  dir: string;
  /** Schema holding the record and outbox tables. */
  schema: string;
  input: CreateInput;
}): Promise<PgbenchRun> {
  const script = join(opts.dir, 'create.pgbench.sql');
  await writeFile(script, pgbenchScript(opts.schema, opts.input));
  const threads = Math.min(opts.clients, 2);
  const args = ['-n', '-c', String(opts.clients), '-j', String(threads), '-T', String(opts.seconds), '-f', script, opts.databaseUrl];
  const r = await runMeasured('pgbench', args, (opts.seconds + 60) * 1000);
  const output = `${r.stdout}\n${r.stderr}`;
  if (r.code !== 0) throw new Error(`pgbench exited with ${r.code ?? r.signal}:\n${errorLines(output) || output.slice(-2000)}`);
  return { ...parsePgbench(output), clients: opts.clients, seconds: opts.seconds, cpuSeconds: r.cpuSeconds };
}
