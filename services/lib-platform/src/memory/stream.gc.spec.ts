import { describe, expect, it } from 'vitest';
import { StreamGc } from './stream.gc.js';

describe('StreamGc', () => {
  it('asks for a young-generation collection after every `everyBytes` streamed', () => {
    const calls: unknown[] = [];
    const gc = new StreamGc((o) => calls.push(o), 1000);
    gc.streamed(400);
    gc.streamed(500);
    expect(calls).toHaveLength(0);
    gc.streamed(100);
    expect(calls).toEqual([{ type: 'minor', execution: 'sync' }]);
    gc.streamed(999);
    expect(calls).toHaveLength(1);
    gc.streamed(5000);
    expect(calls).toHaveLength(2);
    expect(gc.collections).toBe(2);
    expect(gc.enabled).toBe(true);
  });

  it('does nothing without a gc function (a process started without --expose-gc)', () => {
    const gc = new StreamGc(undefined, 1);
    gc.streamed(10);
    expect(gc.enabled).toBe(false);
    expect(gc.collections).toBe(0);
  });
});
