import { describe, expect, it } from 'vitest';
import { configDigest } from '../../kernel/domain/config.events.js';
import type { Schedule } from './scheduler.ports.js';
import { authorRefusal, refusedRunError, runEventError, runsAs, scheduleEventFields, scheduleView, targetEventView } from './scheduler.rules.js';

const digest = configDigest(Buffer.alloc(32, 3));
const A = '0190a000-0000-7000-8000-0000000000a1';
const B = '0190a000-0000-7000-8000-0000000000b2';
const URL_SECRET = 'https://hooks.chat.example/services/T0/B0/xoxb-recognisable';
const SECRET = 'a-recognisable-signing-secret';
const PAYLOAD_SECRET = 'payload-token-recognisable';

const schedule = (over: Partial<Schedule> = {}): Schedule => ({
  id: '0190a000-0000-7000-8000-000000000001',
  name: 'report',
  cron: '0 8 * * 1',
  timezone: 'UTC',
  target: { kind: 'webhook', url: URL_SECRET },
  secret: SECRET,
  active: true,
  catch_up: 'skip',
  next_run_at: '2026-06-01T08:00:00.000Z',
  created_by: A,
  updated_by: A,
  created_at: '2026-05-01T00:00:00.000Z',
  updated_at: '2026-05-01T00:00:00.000Z',
  ...over,
});

describe('scheduler rules', () => {
  it('answers Admins the target as stored (a webhook with has_secret) and the last editor', () => {
    expect(scheduleView(schedule({ updated_by: B }))).toMatchObject({
      target: { kind: 'webhook', url: URL_SECRET, has_secret: true },
      created_by: A,
      updated_by: B,
    });
    expect(JSON.stringify(scheduleView(schedule()))).not.toContain(SECRET);
  });

  it('shows every role a target without URL, secret or payload: kind, has_url, has_secret, has_payload, digest', () => {
    const hook = targetEventView({ kind: 'webhook', url: URL_SECRET }, SECRET, digest);
    expect(hook).toEqual({ kind: 'webhook', has_url: true, has_secret: true, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const job = targetEventView({ kind: 'farm_job', job: { project_id: A, name: 'n', kind: 'k', payload: { token: PAYLOAD_SECRET } } }, null, digest);
    expect(job).toEqual({ kind: 'farm_job', has_payload: true, digest: expect.any(String) });
    expect(targetEventView({ kind: 'farm_job', job: { project_id: A, name: 'n', kind: 'k' } }, null, digest)).toMatchObject({ has_payload: false });
    expect(targetEventView({ kind: 'event', name: 'tick', payload: null }, null, digest)).toEqual({
      kind: 'event',
      has_payload: false,
      digest: expect.any(String),
    });
    const all = JSON.stringify([hook, job, scheduleEventFields(schedule(), digest)]);
    for (const hidden of [URL_SECRET, 'hooks.chat.example', SECRET, PAYLOAD_SECRET]) expect(all).not.toContain(hidden);
    // The digest moves with the URL and with the secret alone.
    expect(targetEventView({ kind: 'webhook', url: URL_SECRET }, 'another-signing-secret', digest).digest).not.toBe(hook.digest);
    expect(targetEventView({ kind: 'webhook', url: `${URL_SECRET}x` }, SECRET, digest).digest).not.toBe(hook.digest);
    expect(targetEventView({ kind: 'webhook', url: URL_SECRET }, SECRET, digest).digest).toBe(hook.digest);
  });

  it('runs as the last editor, or the creator of a schedule written before there was one', () => {
    expect(runsAs(schedule({ updated_by: B }))).toBe(B);
    expect(runsAs(schedule({ updated_by: null }))).toBe(A);
  });

  it('lets a live Admin who may sign in run it, and refuses anyone else with the reason', () => {
    expect(authorRefusal(A, { role: 'Admin', canSignIn: true })).toBeNull();
    expect(authorRefusal(A, { role: 'Artist', canSignIn: true })).toBe(`the schedule runs as user ${A}, who is no longer an Admin (now Artist)`);
    expect(authorRefusal(A, null)).toBe(`the schedule runs as user ${A}, who no longer exists or is retired`);
    expect(authorRefusal(A, { role: 'Admin', canSignIn: false })).toContain('may no longer sign in');
    expect(authorRefusal(null, null)).toBe('the schedule names no user to run as');
    expect(refusedRunError('why')).toMatch(/^principal_refused: why; the schedule is paused/);
  });

  it('takes the webhook URL, host and secret and the farm payload out of the error every role reads', () => {
    const hook = { kind: 'webhook' as const, url: URL_SECRET };
    expect(runEventError(`invalid: url: cannot reach ${URL_SECRET} (hooks.chat.example) signed with ${SECRET}`, hook, SECRET)).toBe(
      'invalid: url: cannot reach [hidden] ([hidden]) signed with [hidden]',
    );
    const job = { kind: 'farm_job' as const, job: { project_id: A, name: 'n', kind: 'k', payload: { token: PAYLOAD_SECRET } } };
    expect(runEventError(`invalid: payload.token: ${PAYLOAD_SECRET} is not allowed`, job, null)).toBe('invalid: payload.token: [hidden] is not allowed');
    expect(runEventError(null, hook, SECRET)).toBeNull();
  });
});
