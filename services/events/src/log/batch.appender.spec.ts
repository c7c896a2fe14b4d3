import { describe, expect, it } from 'vitest';
import type { JsMsg } from '@nats-io/jetstream';
import { createLogger, Metrics, natsNames, type NatsConnection } from '@reelbase/lib-platform';
import { planAppend } from '../domain/append.plan.js';
import type { StreamEvent } from '@reelbase/lib-platform';
import type { LogWriterSession as WriterSession } from '../domain/ports.js';
import { BatchAppender, isWriterFailure } from './batch.appender.js';
import { createWriterMetrics } from './writer.metrics.js';

const uuid = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const payload = (n: number, extra: Record<string, unknown> = {}) => ({
  event_id: uuid(n),
  entity_type: 'Shot',
  entity_id: uuid(1000 + n),
  project_id: null,
  action: 'create',
  actor: null,
  changes: { n },
  occurred_at: '2026-01-01T00:00:00Z',
  ...extra,
});

class FakeMsg {
  outcome: string | null = null;
  constructor(
    readonly data: Uint8Array,
    readonly seq: number,
  ) {}
  readonly subject = 'events.Shot.create';
  ack() {
    this.outcome = 'ack';
  }
  nak() {
    this.outcome = 'nak';
  }
  term() {
    this.outcome = 'term';
  }
}
const msg = (body: unknown, seq = 1) => new FakeMsg(new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)), seq);

/** A session that keeps rows in memory and fails on demand. */
class FakeSession {
  lost: Error | null = null;
  rows = new Map<string, number>();
  calls = 0;
  failWhen: (events: readonly StreamEvent[]) => Error | null = () => null;
  async append(last: number, events: readonly StreamEvent[]) {
    this.calls += 1;
    const err = this.failWhen(events);
    if (err) throw err;
    const plan = planAppend(last, events, new Set(this.rows.keys()));
    for (const r of plan.rows) this.rows.set(r.event_id, r.id);
    return { ...plan, createdAt: plan.rows.map(() => '2026-01-01T00:00:00.000000Z') };
  }
}

function setup() {
  const published: unknown[] = [];
  const nc = { publish: (_s: string, data: string) => published.push(JSON.parse(data)) } as unknown as NatsConnection;
  const appender = new BatchAppender(nc, natsNames('x_'), createLogger('test', 'silent'), createWriterMetrics(new Metrics('test')));
  const session = new FakeSession();
  const run = (last: number, msgs: FakeMsg[]) => appender.append(session as unknown as WriterSession, last, msgs as unknown as JsMsg[]);
  return { published, session, run };
}

const sqlError = (code: string) => Object.assign(new Error(`sql ${code}`), { code });

describe('BatchAppender', () => {
  it('appends, publishes in id order, then acks every message', async () => {
    const { published, session, run } = setup();
    const msgs = [msg(payload(1)), msg(payload(2)), msg(payload(1))];
    expect(await run(5, msgs)).toBe(7);
    expect(session.calls).toBe(1);
    expect(published.map((e) => (e as { id: number }).id)).toEqual([6, 7]);
    expect(msgs.map((m) => m.outcome)).toEqual(['ack', 'ack', 'ack']);
  });

  it('appends the events of a batch message consecutively, in order, between the messages around it', async () => {
    const { published, session, run } = setup();
    const msgs = [msg(payload(1)), msg({ batch: [payload(2), payload(3), payload(4)] }, 2), msg(payload(5), 3)];
    expect(await run(10, msgs)).toBe(15);
    expect(session.calls).toBe(1);
    expect(published.map((e) => [(e as { id: number }).id, (e as { changes: { n: number } }).changes.n])).toEqual([
      [11, 1],
      [12, 2],
      [13, 3],
      [14, 4],
      [15, 5],
    ]);
    expect(msgs.map((m) => m.outcome)).toEqual(['ack', 'ack', 'ack']);
  });

  it('terminates a batch message with a bad event whole, appending the others', async () => {
    const { session, run } = setup();
    const bad = msg({ batch: [payload(2), payload(3, { entity_id: 'nope' })] }, 2);
    expect(await run(0, [msg(payload(1)), bad])).toBe(1);
    expect(bad.outcome).toBe('term');
    expect([...session.rows.keys()]).toEqual([uuid(1)]);
  });

  it('terminates a malformed message and logs the rest', async () => {
    const { session, run } = setup();
    const msgs = [msg('not json'), msg(payload(1)), msg({ ...payload(2), action: 'explode' })];
    expect(await run(0, msgs)).toBe(1);
    expect(msgs.map((m) => m.outcome)).toEqual(['term', 'ack', 'term']);
    expect([...session.rows.values()]).toEqual([1]);
  });

  it('isolates a row the database rejects and keeps ids gapless', async () => {
    const { session, run, published } = setup();
    session.failWhen = (events) => (events.some((e) => e.event_id === uuid(2)) ? sqlError('22P02') : null);
    const msgs = [msg(payload(1)), msg(payload(2)), msg(payload(3))];
    expect(await run(0, msgs)).toBe(2);
    expect(msgs.map((m) => m.outcome)).toEqual(['ack', 'term', 'ack']);
    expect(published.map((e) => (e as { id: number }).id)).toEqual([1, 2]);
  });

  it('hands back a message that failed for a passing reason and every later one, keeping order', async () => {
    const { session, run } = setup();
    // 40P01 (deadlock) is neither the row's fault nor a lost writer: retry later.
    session.failWhen = (events) => (events.some((e) => e.event_id === uuid(2)) ? sqlError('40P01') : null);
    const msgs = [msg(payload(1)), msg(payload(2)), msg(payload(3))];
    expect(await run(0, msgs)).toBe(1);
    expect(msgs.map((m) => m.outcome)).toEqual(['ack', 'nak', 'nak']);
    expect([...session.rows.keys()]).toEqual([uuid(1)]);
  });

  it('naks the whole batch and rethrows when the connection fails', async () => {
    const { session, run } = setup();
    session.failWhen = () => new Error('Connection terminated unexpectedly');
    const msgs = [msg(payload(1)), msg(payload(2))];
    await expect(run(0, msgs)).rejects.toThrow(/terminated/);
    expect(msgs.map((m) => m.outcome)).toEqual(['nak', 'nak']);
    expect(session.calls).toBe(1);
  });

  it('steps down on a primary-key clash (another writer moved the log on)', async () => {
    const { session, run } = setup();
    session.failWhen = () => sqlError('23505');
    const msgs = [msg(payload(1))];
    await expect(run(0, msgs)).rejects.toThrow();
    expect(msgs[0]!.outcome).toBe('nak');
  });
});

describe('isWriterFailure', () => {
  const alive = { lost: null };
  it('classifies errors', () => {
    expect(isWriterFailure(new Error('Client was closed'), alive)).toBe(true);
    expect(isWriterFailure(sqlError('57P01'), alive)).toBe(true);
    expect(isWriterFailure(sqlError('08006'), alive)).toBe(true);
    expect(isWriterFailure(sqlError('22P02'), alive)).toBe(false);
    expect(isWriterFailure(sqlError('40001'), alive)).toBe(false);
    expect(isWriterFailure(sqlError('22P02'), { lost: new Error('gone') })).toBe(true);
  });
});
