import { describe, expect, it } from 'vitest';
import { encodeStreamEvent, parseStreamEvent, type Principal } from '@reelbase/lib-platform';
import { actorOf, buildEventPayload, eventProjectId } from './record.event.js';
import { requiresProject, uuidProblems } from './record.rules.js';
import type { RecordView } from './record.types.js';

const user: Principal = { userId: '0190a000-0000-7000-8000-0000000000u1', role: 'Artist', authKind: 'token' };
const guest: Principal = { userId: '', role: 'Guest', authKind: 'guest', guestName: 'Client Jo' };
const svc: Principal = { userId: '', role: 'Service', authKind: 'service' };

const note: RecordView = {
  id: '0190a000-0000-7000-8000-000000000002',
  entityType: 'Note',
  projectId: '0190a000-0000-7000-8000-0000000000aa',
  status: null,
  active: true,
  thumbnailId: null,
  createdBy: null,
  createdAt: '2026-01-01T00:00:00.000001Z',
  updatedAt: '2026-01-01T00:00:00.123456Z',
  data: {},
};

describe('buildEventPayload', () => {
  it('carries the event shape of the outbox', () => {
    const p = buildEventPayload({ eventId: 'e1', record: note, action: 'create', principal: user, changes: { a: 1 }, occurredAt: note.updatedAt });
    expect(p).toEqual({
      event_id: 'e1',
      entity_type: 'Note',
      entity_id: note.id,
      project_id: note.projectId,
      action: 'create',
      actor: user.userId,
      changes: { a: 1 },
      occurred_at: '2026-01-01T00:00:00.123456Z',
    });
  });

  it('names a guest in changes and has no actor', () => {
    const p = buildEventPayload({ eventId: 'e2', record: note, action: 'create', principal: guest, changes: { content: 'hi' }, occurredAt: 'x' });
    expect(p.actor).toBeNull();
    expect(p.changes).toEqual({ content: 'hi', guest_name: 'Client Jo' });
    const d = buildEventPayload({ eventId: 'e3', record: note, action: 'delete', principal: guest, changes: {}, occurredAt: 'x' });
    expect(d.changes).toEqual({});
  });

  it('uses the project’s own id as project_id of a Project', () => {
    const project = { ...note, entityType: 'Project', projectId: null };
    expect(eventProjectId(project)).toBe(project.id);
    expect(buildEventPayload({ eventId: 'e4', record: project, action: 'update', principal: svc, changes: {}, occurredAt: 'x' }).project_id).toBe(project.id);
  });

  it('is read back by the events service exactly as built (one shared definition)', () => {
    const artist: Principal = { ...user, userId: '0190a000-0000-7000-8000-0000000000c1' };
    const p = buildEventPayload({
      eventId: '0190a000-0000-7000-8000-0000000000e5',
      record: note,
      action: 'update',
      principal: artist,
      changes: { status: 'ip' },
      occurredAt: note.updatedAt,
    });
    expect(parseStreamEvent(encodeStreamEvent(p))).toEqual({ ok: true, event: p });
  });

  it('has no actor for services and anonymous calls', () => {
    expect(actorOf(svc)).toBeNull();
    expect(actorOf({ ...svc, userId: user.userId })).toBe(user.userId);
    expect(actorOf(undefined)).toBeNull();
    expect(actorOf(user)).toBe(user.userId);
  });
});

describe('rules', () => {
  it('project-scoped types', () => {
    expect(requiresProject('Shot')).toBe(true);
    expect(requiresProject('TimeLog')).toBe(true);
    expect(requiresProject('Project')).toBe(false);
    expect(requiresProject('User')).toBe(false);
    expect(requiresProject('Preset')).toBe(false);
    expect(requiresProject('Vehicle')).toBe(false);
  });

  it('uuid problems name each bad field', () => {
    expect(uuidProblems({ project_id: 'nope', thumbnail_id: null, id: undefined })).toEqual([
      { loc: ['project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' },
    ]);
  });
});
