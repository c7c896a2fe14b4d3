import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../logger.js';
import { IntervalLoop, type BackgroundLoop } from './background.js';
import { ResourceStack } from './resource.stack.js';

const logger = createLogger('background-spec', 'silent');

afterEach(() => {
  vi.useRealTimers();
});

describe('ResourceStack.startLoop', () => {
  it('starts the loop at once and stops it in the stack order: after what was deferred later, before what was deferred earlier', async () => {
    const order: string[] = [];
    const loop: BackgroundLoop = {
      start: () => order.push('relay started'),
      stop: async () => {
        await new Promise((r) => setTimeout(r, 5));
        order.push('relay stopped');
      },
    };
    const stack = new ResourceStack(logger);
    stack.defer('nats', () => order.push('nats closed'));
    stack.startLoop('relay', loop);
    expect(order).toEqual(['relay started']);
    stack.defer('grpc', () => order.push('grpc closed'));
    await stack.closeAll();
    expect(order).toEqual(['relay started', 'grpc closed', 'relay stopped', 'nats closed']);
  });

  it('stops a loop started after closeAll began at once', async () => {
    const stack = new ResourceStack(logger);
    const stopped = vi.fn();
    const closing = stack.closeAll();
    stack.startLoop('late', { start: () => {}, stop: stopped });
    await closing;
    await new Promise((r) => setTimeout(r, 0));
    expect(stopped).toHaveBeenCalledOnce();
  });
});

describe('IntervalLoop', () => {
  it('ticks at once when immediate, then every interval, and not after stop', () => {
    vi.useFakeTimers();
    const tick = vi.fn();
    const loop = new IntervalLoop(1000, tick, () => {}, { immediate: true });
    loop.start();
    expect(tick).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(3000);
    expect(tick).toHaveBeenCalledTimes(4);
    loop.stop();
    vi.advanceTimersByTime(5000);
    expect(tick).toHaveBeenCalledTimes(4);
  });

  it('waits one interval for the first tick unless immediate', () => {
    vi.useFakeTimers();
    const tick = vi.fn();
    const loop = new IntervalLoop(1000, tick, () => {});
    loop.start();
    expect(tick).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(tick).toHaveBeenCalledOnce();
    loop.stop();
  });

  it('hands a tick that throws or rejects to onError and keeps ticking', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let n = 0;
    const loop = new IntervalLoop(
      100,
      () => {
        n++;
        if (n === 1) throw new Error('sync');
        if (n === 2) return Promise.reject(new Error('async'));
        return undefined;
      },
      (err) => errors.push((err as Error).message),
    );
    loop.start();
    await vi.advanceTimersByTimeAsync(300);
    loop.stop();
    expect(n).toBe(3);
    expect(errors).toEqual(['sync', 'async']);
  });
});
