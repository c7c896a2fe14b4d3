import { describe, expect, it } from 'vitest';
import { Readiness } from './readiness.js';

describe('Readiness', () => {
  it('is ready when every check answers', async () => {
    const r = new Readiness(100).add('db', async () => 1).add('nats', () => Promise.resolve());
    expect(await r.run()).toEqual({ ready: true, checks: { db: 'ok', nats: 'ok' }, failing: undefined });
  });

  it('is ready with no checks at all', async () => {
    expect((await new Readiness(100).run()).ready).toBe(true);
  });

  it('names the failing check and keeps the others', async () => {
    const r = new Readiness(100)
      .add('db', async () => 1)
      .add('nats', async () => {
        throw new Error('connection refused');
      });
    const report = await r.run();
    expect(report.ready).toBe(false);
    expect(report.failing).toBe('nats');
    expect(report.checks).toEqual({ db: 'ok', nats: 'connection refused' });
  });

  it('reports a check that never answers as failed within the timeout', async () => {
    const r = new Readiness(100).add('db', async () => 1).add('peer', () => new Promise(() => {}));
    const started = Date.now();
    const report = await r.run();
    const elapsed = Date.now() - started;
    expect(report.ready).toBe(false);
    expect(report.failing).toBe('peer');
    expect(report.checks.peer).toMatch(/100 ms/);
    expect(report.checks.db).toBe('ok');
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(elapsed).toBeLessThan(1000);
  });

  it('runs checks in parallel, so the timeout bounds the whole run', async () => {
    const hang = () => new Promise(() => {});
    const r = new Readiness(100).add('a', hang).add('b', hang).add('c', hang);
    const started = Date.now();
    const report = await r.run();
    expect(Date.now() - started).toBeLessThan(250);
    expect(Object.values(report.checks).every((v) => v !== 'ok')).toBe(true);
  });

  it('replaces a check added under the same name', async () => {
    const r = new Readiness(100)
      .add('db', async () => {
        throw new Error('old');
      })
      .add('db', async () => 1);
    expect((await r.run()).checks).toEqual({ db: 'ok' });
  });
});
