import { describe, expect, it } from 'vitest';
import { parsePgbench, pgbenchScript } from './pgbench.js';
import { insertOutboxSql, insertRecordSql } from './transaction.sql.js';

const INSERT_RECORD_SQL = insertRecordSql('bench_shadow');
const INSERT_OUTBOX_SQL = insertOutboxSql('bench_shadow');

const TIMED = `pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: /tmp/create.pgbench.sql
scaling factor: 1
query mode: simple
number of clients: 32
number of threads: 2
maximum number of tries: 1
duration: 10 s
number of transactions actually processed: 44850
number of failed transactions: 0 (0.000%)
latency average = 7.134 ms
initial connection time = 30.512 ms
tps = 4485.123456 (without initial connection time)
`;

const ABORTED = `pgbench: error: client 3 script 0 aborted in command 1 query 0: ERROR:  relation "records.record" does not exist
transaction type: /tmp/create.pgbench.sql
number of transactions actually processed: 0
number of failed transactions: 0 (0.000%)
Run was aborted; the above results are incomplete.
tps = 0.000000 (without initial connection time)
`;

describe('parsePgbench', () => {
  it('reads tps without the connection time, the counts and the mean latency', () => {
    expect(parsePgbench(TIMED)).toEqual({ tps: 4485.123456, transactions: 44850, failed: 0, latencyAvgMs: 7.134 });
  });

  it('reads a fixed-count run (processed: n/m)', () => {
    const r = parsePgbench(TIMED.replace('processed: 44850', 'processed: 10/10'));
    expect(r.transactions).toBe(10);
  });

  it('refuses an aborted run and names the error', () => {
    expect(() => parsePgbench(ABORTED)).toThrow(/aborted[\s\S]*does not exist/);
  });

  it('refuses output without a tps line', () => {
    expect(() => parsePgbench('could not connect to server')).toThrow(/tps/);
  });
});

describe('pgbenchScript', () => {
  const input = { entityType: 'Shot', projectId: '0190a0a0-0000-7000-8000-000000000001', actor: null, data: { code: "O'Brien" } };
  const lines = pgbenchScript('bench_shadow', input).trim().split('\n');

  it('is one transaction of the two shared statements, four commands', () => {
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe('BEGIN;');
    expect(lines[3]).toBe('COMMIT;');
    expect(lines[1]!.startsWith(INSERT_RECORD_SQL.slice(0, INSERT_RECORD_SQL.indexOf('$1')))).toBe(true);
    expect(lines[2]!.startsWith(INSERT_OUTBOX_SQL.slice(0, INSERT_OUTBOX_SQL.indexOf('$1')))).toBe(true);
  });

  it('keeps the record row in variables and points the outbox row at its id', () => {
    expect(lines[1]).toMatch(/ \\gset rec_$/);
    expect(lines[2]).toContain("'entity_id', ':rec_id'::uuid");
    expect(lines.join('\n')).not.toMatch(/\$\d/);
  });

  it('writes values as escaped literals and NULLs', () => {
    expect(lines[1]).toContain(`'{"code":"O''Brien"}'::jsonb`);
    expect(lines[1]).toContain("'Shot'::text, '0190a0a0-0000-7000-8000-000000000001'::uuid, NULL, true, NULL, NULL::uuid");
  });
});
