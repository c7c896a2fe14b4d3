import { describe, expect, it } from 'vitest';
import { OutboxTable } from './outbox.table.js';

describe('OutboxTable, the write kernel of outbox rows', () => {
  it('inserts into its own table the columns the relay reads, from the rows a statement gives it', () => {
    const records = new OutboxTable('records.outbox');
    expect(records.insertFrom('select v.e, v.s, v.p from v order by v.i')).toBe(
      'insert into records.outbox (event_id, subject, payload) select v.e, v.s, v.p from v order by v.i',
    );
    expect(new OutboxTable('schema.outbox').insertFrom('values ($1, $2, $3::jsonb)', 'payload')).toBe(
      'insert into schema.outbox (event_id, subject, payload) values ($1, $2, $3::jsonb) returning payload',
    );
  });

  it('gives one text per shape, so a statement built around it stays prepared once', () => {
    const t = new OutboxTable('records.outbox');
    expect(t.insertFrom('select ?, ?, ?::jsonb from r')).toBe(t.insertFrom('select ?, ?, ?::jsonb from r'));
  });

  it('refuses a table that is not named schema.table in lower case', () => {
    expect(() => new OutboxTable('outbox')).toThrow(/schema\.table/);
    expect(() => new OutboxTable('records.outbox; drop table x')).toThrow(/schema\.table/);
  });
});
