import { AppError, type CallContext } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import { RecordViews, totalMinutes } from './record.views.js';
import type { RecordViewStore } from './core.ports.js';

const USER = '0190a0b0-0000-7000-8000-000000000003';
const SHOT = '0190a0b0-0000-7000-8000-0000000000c1';
const asAdmin: CallContext = { requestId: 'r', principal: { userId: '0190a0b0-0000-7000-8000-000000000001', role: 'Admin', authKind: 'token' } };

const row = (id: string, entityType: string, data: Record<string, unknown>, retired = false): StoredRecord => ({
  id,
  entityType,
  projectId: null,
  status: null,
  active: true,
  thumbnailId: null,
  createdBy: null,
  createdAt: '2026-01-01T00:00:00.000000Z',
  updatedAt: '2026-01-01T00:00:00.000000Z',
  data,
  retired,
});

/** A store whose view reads answer `rows`, whatever they are asked. */
function store(rows: StoredRecord[]): RecordViewStore {
  const known = new Map([row(USER, 'User', {}), row(SHOT, 'Shot', {})].map((r) => [r.id, r]));
  return {
    find: async (id) => known.get(id),
    notesLinking: async () => rows,
    tasksAssignedTo: async () => rows,
    timeLogsOf: async () => rows,
    restrictedProjects: async () => [],
  };
}

describe('RecordViews', () => {
  it('sums integer minutes; anything else counts 0', () => {
    const logs = [row('a', 'TimeLog', { minutes: 30 }), row('b', 'TimeLog', { minutes: '15' }), row('c', 'TimeLog', {})];
    expect(totalMinutes(logs)).toBe(30);
  });

  it('refuses an answer past its byte budget with too_large, and gives one within it whole', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => row(`n${i}`, 'Note', { content: 'x'.repeat(600) }));
    const roomy = new RecordViews(store(rows), 10 * 1024);
    expect(await roomy.notes('Shot', SHOT, asAdmin)).toHaveLength(10);
    const tight = new RecordViews(store(rows), 5 * 1024);
    for (const p of [tight.notes('Shot', SHOT, asAdmin), tight.userTasks(USER, asAdmin), tight.timesheet(USER, '2026-01-01', '2026-01-31', asAdmin)]) {
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).kind).toBe('too_large');
      expect((err as AppError).message).toContain('query');
    }
  });

  it('returns views without the retired flag', async () => {
    const [note] = await new RecordViews(store([row('n', 'Note', { subject: 's' })])).notes('Shot', SHOT.toUpperCase(), asAdmin);
    expect(note).not.toHaveProperty('retired');
    expect(note).toMatchObject({ id: 'n', data: { subject: 's' } });
  });
});
