import { schedulerCodec } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { SchedulerService } from '../domain/scheduler.service.js';
import { schedulerHandlers } from './scheduler.handler.js';

const ADMIN = { requestId: 'r', principal: { userId: '0190a0b0-0000-7000-8000-000000000001', role: 'Admin', authKind: 'token' } } as never;
const ID = '0190a0b0-0000-7000-8000-0000000000a1';
const SCHEDULE = {
  id: ID,
  name: 'n',
  cron: '@daily',
  timezone: 'UTC',
  target: { kind: 'webhook', url: 'https://hooks.example.com/a', has_secret: true },
  active: true,
  catch_up: 'skip',
  next_run_at: null,
  created_by: ID,
  updated_by: ID,
  created_at: 't',
  updated_at: 't',
};

/** A scheduler that records the body it was given and answers SCHEDULE. */
function recorder(seen: unknown[]): SchedulerService {
  return {
    create: async (body: unknown) => {
      seen.push(body);
      return SCHEDULE;
    },
    update: async (_id: string, body: unknown) => {
      seen.push(body);
      return SCHEDULE;
    },
    runs: async () => ({ items: [], next_cursor: null }),
  } as unknown as SchedulerService;
}

describe('schedulerHandlers', () => {
  it('reads the typed body and answers typed with the deprecated json filled beside it', async () => {
    const seen: unknown[] = [];
    const h = schedulerHandlers({ scheduler: recorder(seen) });
    const body = { name: 'n', cron: '@daily', target: { kind: 'webhook', url: 'https://hooks.example.com/a', secret: null } };
    const out = await h.createSchedule({ bodyJson: '{"ignored":true}', body: schedulerCodec.scheduleBodyToProto(body) }, ADMIN);
    expect(seen).toEqual([body]);
    expect(JSON.parse(out.json)).toEqual(SCHEDULE);
    expect(schedulerCodec.scheduleFromProto(out.schedule!)).toEqual(SCHEDULE);
  });

  it('reads the deprecated body_json when a gateway of the previous release sent no typed body', async () => {
    const seen: unknown[] = [];
    const h = schedulerHandlers({ scheduler: recorder(seen) });
    await h.updateSchedule({ id: ID, bodyJson: '{"active":false}' }, ADMIN);
    expect(seen).toEqual(['{"active":false}']);
  });

  it('answers a page of runs typed and as json', async () => {
    const h = schedulerHandlers({ scheduler: recorder([]) });
    const out = await h.listRuns({ id: ID, limit: 0 }, ADMIN);
    expect(out).toEqual({ json: '{"items":[],"next_cursor":null}', items: [], nextCursor: undefined });
  });
});
