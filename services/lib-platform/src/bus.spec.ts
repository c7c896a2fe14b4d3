import { describe, expect, it, vi } from 'vitest';
import { InProcessBus } from './bus.js';

describe('InProcessBus', () => {
  it('delivers synchronously to every subscriber in order', () => {
    const bus = new InProcessBus<{ t: number }>();
    const seen: string[] = [];
    bus.subscribe('t', (n) => seen.push(`a${n}`));
    bus.subscribe('t', (n) => seen.push(`b${n}`));
    expect(bus.emit('t', 1)).toBe(2);
    expect(seen).toEqual(['a1', 'b1']);
  });

  it('keeps delivering when one subscriber throws, and reports the error', () => {
    const onError = vi.fn();
    const bus = new InProcessBus<{ t: string }>(onError);
    const got: string[] = [];
    bus.subscribe('t', () => {
      throw new Error('boom');
    });
    bus.subscribe('t', (s) => got.push(s));
    expect(bus.emit('t', 'x')).toBe(1);
    expect(got).toEqual(['x']);
    expect(onError).toHaveBeenCalledOnce();
    expect((onError.mock.calls[0]![0] as Error).message).toBe('boom');
  });

  it('unsubscribes, also from inside a callback', () => {
    const bus = new InProcessBus<{ t: number }>();
    const got: number[] = [];
    const off = bus.subscribe('t', (n) => {
      got.push(n);
      off();
    });
    bus.emit('t', 1);
    bus.emit('t', 2);
    expect(got).toEqual([1]);
    expect(bus.count('t')).toBe(0);
    expect(bus.unsubscribe('t', () => {})).toBe(false);
  });

  it('survives a reporter that throws', () => {
    const bus = new InProcessBus<{ t: number }>(() => {
      throw new Error('reporter');
    });
    bus.subscribe('t', () => {
      throw new Error('x');
    });
    expect(() => bus.emit('t', 1)).not.toThrow();
  });
});
