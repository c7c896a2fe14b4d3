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
    void loop.stop();
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
    void loop.stop();
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
    await loop.stop();
    expect(n).toBe(3);
    expect(errors).toEqual(['sync', 'async']);
  });
});

describe('IntervalLoop: one tick at a time, and a stop that waits for it', () => {
  /** A tick that runs until `release` is called. */
  function slowTicks() {
    const releases: Array<() => void> = [];
    const tick = vi.fn((_signal: AbortSignal) => new Promise<void>((resolve) => releases.push(resolve)));
    return { tick, release: () => releases.shift()?.() };
  }

  it('never starts a tick while the previous one runs: the next is due one interval after it ended', async () => {
    vi.useFakeTimers();
    const { tick, release } = slowTicks();
    const loop = new IntervalLoop(1000, tick, () => {});
    loop.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(tick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(tick).toHaveBeenCalledTimes(1);
    release();
    await vi.advanceTimersByTimeAsync(999);
    expect(tick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(tick).toHaveBeenCalledTimes(2);
    release();
    await loop.stop();
  });

  it('stop resolves only once the tick in flight has finished, and no tick starts after it', async () => {
    vi.useFakeTimers();
    const { tick, release } = slowTicks();
    const loop = new IntervalLoop(1000, tick, () => {}, { immediate: true });
    loop.start();
    expect(tick).toHaveBeenCalledTimes(1);
    const signal = tick.mock.calls[0]?.[0];
    let stopped = false;
    void Promise.resolve(loop.stop()).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(5000);
    expect(stopped).toBe(false);
    expect(signal?.aborted).toBe(true);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('is stopped for good: a start after stop starts no tick', async () => {
    vi.useFakeTimers();
    const tick = vi.fn();
    const loop = new IntervalLoop(1000, tick, () => {}, { immediate: true });
    loop.start();
    await loop.stop();
    loop.start();
    await vi.advanceTimersByTimeAsync(5000);
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('bounds the wait: stop rejects after stopTimeoutMs when the tick in flight never ends', async () => {
    vi.useFakeTimers();
    const { tick } = slowTicks();
    const loop = new IntervalLoop(1000, tick, () => {}, { immediate: true, stopTimeoutMs: 3000 });
    loop.start();
    const stopping = loop.stop();
    const outcome = stopping.then(
      () => 'resolved',
      (err: unknown) => (err as Error).message,
    );
    await vi.advanceTimersByTimeAsync(3000);
    expect(await outcome).toBe('the tick in flight did not finish within 3000 ms');
    expect(tick).toHaveBeenCalledTimes(1);
  });

  it('waits firstMs for the first tick, then asks the interval function after every tick', async () => {
    vi.useFakeTimers();
    let pause = 500;
    const tick = vi.fn(() => {
      pause = 2000;
    });
    const loop = new IntervalLoop(
      () => pause,
      tick,
      () => {},
      { firstMs: 100 },
    );
    loop.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(tick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1999);
    expect(tick).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(tick).toHaveBeenCalledTimes(2);
    await loop.stop();
  });

  it('goes on when onError itself throws', async () => {
    vi.useFakeTimers();
    const tick = vi.fn(() => Promise.reject(new Error('tick')));
    const loop = new IntervalLoop(100, tick, () => {
      throw new Error('handler');
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(300);
    expect(tick).toHaveBeenCalledTimes(3);
    await loop.stop();
  });
});
