import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { ResourceStack, withResources } from './resource.stack.js';

/** A logger whose lines are kept as parsed objects. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('lifecycle-test', 'info', stream) };
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ResourceStack', () => {
  it('closes last deferred first, awaiting each', async () => {
    const order: string[] = [];
    const stack = new ResourceStack(capture().logger)
      .defer('pool', () => order.push('pool'))
      .defer('nats', async () => {
        await tick(20);
        order.push('nats');
      })
      .defer('grpc', () => order.push('grpc'));
    await stack.closeAll();
    expect(order).toEqual(['grpc', 'nats', 'pool']);
  });

  it('logs a failed step, throwing or rejecting, and goes on with the next', async () => {
    const { lines, logger } = capture();
    const order: string[] = [];
    const stack = new ResourceStack(logger)
      .defer('first', () => order.push('first'))
      .defer('sync-throw', () => {
        throw new Error('boom');
      })
      .defer('reject', () => Promise.reject(new Error('nope')))
      .defer('last', () => order.push('last'));
    await expect(stack.closeAll()).resolves.toBeUndefined();
    expect(order).toEqual(['last', 'first']);
    const failed = lines.filter((l) => l.msg === 'stop step failed');
    expect(failed.map((l) => l.step)).toEqual(['reject', 'sync-throw']);
    expect(failed.map((l) => (l.err as { message: string }).message)).toEqual(['nope', 'boom']);
  });

  it('bounds each step: one that hangs is logged and the next one still runs', async () => {
    const { lines, logger } = capture();
    const order: string[] = [];
    const stack = new ResourceStack(logger, 50).defer('pool', () => order.push('pool')).defer('hang', () => new Promise(() => {}));
    const started = Date.now();
    await stack.closeAll();
    expect(order).toEqual(['pool']);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(lines.find((l) => l.msg === 'stop step timed out')).toMatchObject({ step: 'hang', level: 'warn' });
  });

  it('closes once however often closeAll is called', async () => {
    let n = 0;
    const stack = new ResourceStack(capture().logger).defer('count', async () => {
      await tick(10);
      n++;
    });
    const a = stack.closeAll();
    const b = stack.closeAll();
    expect(b).toBe(a);
    await Promise.all([a, b]);
    await stack.closeAll();
    expect(n).toBe(1);
    expect(stack.closed).toBe(true);
  });

  it('closes a resource deferred after closeAll began, once the others are closed', async () => {
    const order: string[] = [];
    const stack = new ResourceStack(capture().logger).defer('slow', async () => {
      await tick(20);
      order.push('slow');
    });
    const closing = stack.closeAll();
    stack.defer('late', () => order.push('late'));
    await closing;
    await tick(5);
    expect(order).toEqual(['slow', 'late']);
  });
});

describe('withResources', () => {
  it('closes what a failed start had opened, in reverse, and rethrows the start error', async () => {
    const order: string[] = [];
    const failure = new Error('nats unreachable');
    await expect(
      withResources(capture().logger, async (resources) => {
        resources.defer('pool', () => order.push('pool'));
        resources.defer('ops', () => order.push('ops'));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(order).toEqual(['ops', 'pool']);
  });

  it('leaves everything open after a successful start', async () => {
    const order: string[] = [];
    const running = await withResources(capture().logger, async (resources) => {
      resources.defer('pool', () => order.push('pool'));
      return { stop: () => resources.closeAll() };
    });
    expect(order).toEqual([]);
    await running.stop();
    expect(order).toEqual(['pool']);
  });
});
