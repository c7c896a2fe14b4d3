import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.js';
import { Shutdown } from './shutdown.js';

const logger = createLogger('shutdown-test', 'silent');

describe('Shutdown.run', () => {
  afterEach(() => vi.restoreAllMocks());

  it('runs steps last-registered first, awaiting each', async () => {
    const order: string[] = [];
    const s = new Shutdown(logger, 5000)
      .add('pool', () => {
        order.push('pool');
      })
      .add('nats', async () => {
        await new Promise((r) => setTimeout(r, 20));
        order.push('nats');
      })
      .add('grpc', async () => {
        order.push('grpc');
      });
    await s.run();
    expect(order).toEqual(['grpc', 'nats', 'pool']);
  });

  it('keeps going when a step fails', async () => {
    const order: string[] = [];
    const warn = vi.spyOn(logger, 'warn');
    const s = new Shutdown(logger, 5000)
      .add('first', () => order.push('first'))
      .add('sync-throw', () => {
        throw new Error('boom');
      })
      .add('reject', async () => {
        throw new Error('nope');
      })
      .add('last', () => order.push('last'));
    await expect(s.run()).resolves.toBeUndefined();
    expect(order).toEqual(['last', 'first']);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('runs the steps once however often it is called', async () => {
    let n = 0;
    const s = new Shutdown(logger, 5000).add('count', async () => {
      await new Promise((r) => setTimeout(r, 10));
      n++;
    });
    const a = s.run();
    const b = s.run();
    expect(b).toBe(a);
    await Promise.all([a, b]);
    await s.run();
    expect(n).toBe(1);
  });

  it('exits with 1 when the steps outlast the timeout', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const s = new Shutdown(logger, 50).add('hang', () => new Promise(() => {}));
    void s.run();
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(1), { timeout: 1000 });
  });

  it('does not exit when the steps finish in time', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    await new Shutdown(logger, 50).add('quick', () => undefined).run();
    await new Promise((r) => setTimeout(r, 100));
    expect(exit).not.toHaveBeenCalled();
  });
});
