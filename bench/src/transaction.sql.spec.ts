import { describe, expect, it } from 'vitest';
import { bindText, createChanges, insertOutboxSql, insertRecordSql, outboxParams, recordParams, sqlLiteral } from './transaction.sql.js';

describe('bindText', () => {
  it('replaces each placeholder once, so values containing $n are left alone', () => {
    expect(bindText('a $1 b $2 c $1', ["'$2'", 'NULL'])).toBe("a '$2' b NULL c '$2'");
  });

  it('refuses a placeholder without a value', () => {
    expect(() => bindText('$1 $3', ['x', 'y'])).toThrow(/\$3/);
  });
});

describe('sqlLiteral', () => {
  it('doubles quotes and writes NULL for null', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
    expect(sqlLiteral(null)).toBe('NULL');
  });
});

describe('statements', () => {
  it('take as many parameters as their helpers give', () => {
    const input = { entityType: 'Shot', projectId: 'p', actor: 'u', data: { code: 'A' } };
    const count = (sql: string) => new Set(sql.match(/\$\d+/g)).size;
    expect(count(insertRecordSql('records'))).toBe(recordParams(input).length);
    expect(count(insertOutboxSql('records'))).toBe(outboxParams(input, 'r').length);
    expect(outboxParams(input, 'r').slice(0, 3)).toEqual(['events.Shot.create', 'Shot', 'r']);
  });

  it('refuse a schema name that would need quoting', () => {
    expect(() => insertRecordSql('x; drop table y')).toThrow(/unsafe/);
  });

  it('log every set column and data field in a create', () => {
    expect(createChanges({ entityType: 'Shot', projectId: 'p', actor: null, data: { code: 'A' } })).toEqual({ active: true, code: 'A', project_id: 'p' });
    expect(createChanges({ entityType: 'Project', projectId: null, actor: null, data: {} })).toEqual({ active: true });
  });
});
