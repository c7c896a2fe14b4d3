import { schedulerCodec } from '@reelbase/lib-platform';
import { schedulerv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import { runListText, runText, scheduleBodyRequest, scheduleDeletedText, scheduleListText, scheduleText } from './scheduler.mapper.js';

const P = '0190a0b0-0000-7000-8000-0000000000b1';
const A = '0190a0b0-0000-7000-8000-0000000000a1';

/** A message through the wire, as the other side decodes it. */
const wire = <T>(fns: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T }, m: T): T => fns.decode(fns.encode(m).finish());

const JOB = {
  project_id: P,
  name: 'dailies',
  kind: 'playlist',
  pool: 'default',
  priority: 50,
  chunk_size: 10,
  max_attempts: 3,
  depends_on: [A],
  payload: { scene: '/shows/x.ma', frames: [1, 2], deep: { on: true, none: null } },
  frames: '1001-1100',
};

const SCHEDULE = {
  id: A,
  name: 'Nightly',
  cron: '0 2 * * 1-5',
  timezone: 'Europe/London',
  active: true,
  catch_up: 'skip',
  next_run_at: '2026-06-02T01:00:00.000Z',
  created_by: A,
  updated_by: A,
  created_at: '2026-06-01T12:00:00.000000Z',
  updated_at: '2026-06-01T12:00:00.000000Z',
};

describe('scheduler mapper: requests', () => {
  it.each([
    ['a farm job with its defaults and payload', { kind: 'farm_job', job: JOB }],
    ['a webhook with a secret', { kind: 'webhook', url: 'https://hooks.example.com/a', secret: 's'.repeat(16) }],
    ['a webhook removing its secret', { kind: 'webhook', url: 'https://hooks.example.com/a', secret: null }],
    ['a webhook keeping its secret', { kind: 'webhook', url: 'https://hooks.example.com/a' }],
    ['an event with a payload', { kind: 'event', name: 'tick', payload: [1, 'two', { three: 3 }] }],
    ['an event without one', { kind: 'event', name: 'tick' }],
  ])('sends %s typed and as the deprecated body_json, and the service reads the same body back', (_what, target) => {
    const body = { name: 'n', cron: '@daily', timezone: 'UTC', target, active: false, catch_up: 'once' };
    const req = wire(schedulerv1.CreateScheduleRequest, scheduleBodyRequest(body));
    expect(JSON.parse(req.bodyJson)).toEqual(body);
    expect(req.body?.target?.kind?.$case).toBe(target.kind === 'farm_job' ? 'farmJob' : target.kind);
    expect(schedulerCodec.scheduleBodyFromProto(req.body!)).toEqual(body);
  });

  it('a patch carries only the fields it has', () => {
    const req = wire(schedulerv1.UpdateScheduleRequest, { id: A, ...scheduleBodyRequest({ active: true }) });
    expect(req.body).toMatchObject({ active: true });
    expect(schedulerCodec.scheduleBodyFromProto(req.body!)).toEqual({ active: true });
    expect(req.bodyJson).toBe('{"active":true}');
  });
});

describe('scheduler mapper: answers', () => {
  it.each([
    ['farm job', { kind: 'farm_job', job: JOB }],
    ['webhook', { kind: 'webhook', url: 'https://hooks.example.com/a', has_secret: true }],
    ['event with a null payload', { kind: 'event', name: 'tick', payload: null }],
    ['event with a payload', { kind: 'event', name: 'tick', payload: { a: [1] } }],
  ])('a schedule with a %s target reads as the JSON the service answered', (_what, target) => {
    const json = { ...SCHEDULE, target };
    const res = wire(schedulerv1.GetScheduleResponse, { json: JSON.stringify(json), schedule: schedulerCodec.scheduleToProto(json) });
    expect(res.schedule).toBeDefined();
    expect(JSON.parse(scheduleText(res))).toEqual(json);
  });

  it('nulls of an inactive schedule come back as nulls', () => {
    const json = { ...SCHEDULE, active: false, next_run_at: null, created_by: null, updated_by: null, target: { kind: 'event', name: 'x', payload: null } };
    const res = wire(schedulerv1.GetScheduleResponse, { json: '', schedule: schedulerCodec.scheduleToProto(json) });
    expect(JSON.parse(scheduleText(res))).toEqual(json);
  });

  it('reads the typed answer, not the deprecated json, when both are there', () => {
    const res = { json: '{"stale":true}', schedule: schedulerCodec.scheduleToProto({ ...SCHEDULE, target: { kind: 'event', name: 'x', payload: null } }) };
    expect(JSON.parse(scheduleText(res))).toMatchObject({ id: A, name: 'Nightly' });
  });

  it('passes the deprecated json on as it came from a service of the previous release (no typed answer)', () => {
    expect(scheduleText({ json: '{"id":"x"}' })).toBe('{"id":"x"}');
    expect(scheduleText({ json: '' })).toBe('{}');
    expect(scheduleListText({ json: '{"items":[]}', items: [] })).toBe('{"items":[]}');
    expect(scheduleDeletedText({ json: '{"id":"x","deleted":true}', id: '', deleted: false })).toBe('{"id":"x","deleted":true}');
    expect(runText({ json: '{"id":"r"}' })).toBe('{"id":"r"}');
    expect(runListText({ json: '{"items":[],"next_cursor":null}', items: [] })).toBe('{"items":[],"next_cursor":null}');
  });

  it('lists, deletes and runs read from their typed answers', () => {
    const target = { kind: 'webhook', url: 'https://hooks.example.com/a', has_secret: false };
    const list = wire(schedulerv1.ListSchedulesResponse, { json: '', items: [schedulerCodec.scheduleToProto({ ...SCHEDULE, target })] });
    expect(JSON.parse(scheduleListText(list))).toEqual({ items: [{ ...SCHEDULE, target }] });
    expect(JSON.parse(scheduleListText({ json: '', items: [] }))).toEqual({ items: [] });
    expect(JSON.parse(scheduleDeletedText({ json: '', id: A, deleted: true }))).toEqual({ id: A, deleted: true });
    const runs = [
      { id: A, scheduled_for: 'a', started_at: 'b', status: 'ok', result: { job_id: P }, error: null, requested_by: A },
      { id: A, scheduled_for: 'a', started_at: 'b', status: 'ok', result: { delivery_id: P }, error: null, requested_by: null },
      { id: A, scheduled_for: 'a', started_at: 'b', status: 'ok', result: { name: 'tick' }, error: null, requested_by: null },
      { id: A, scheduled_for: 'a', started_at: 'b', status: 'failed', result: null, error: 'principal_refused: gone', requested_by: null },
    ];
    const page = wire(schedulerv1.ListRunsResponse, { json: '', items: runs.map(schedulerCodec.runToProto), nextCursor: 'abc' });
    expect(JSON.parse(runListText(page))).toEqual({ items: runs, next_cursor: 'abc' });
    const last = wire(schedulerv1.ListRunsResponse, { json: '', items: runs.slice(0, 1).map(schedulerCodec.runToProto) });
    expect(JSON.parse(runListText(last))).toEqual({ items: runs.slice(0, 1), next_cursor: null });
    expect(JSON.parse(runText({ json: '', run: schedulerCodec.runToProto(runs[3]!) }))).toEqual(runs[3]);
  });
});
