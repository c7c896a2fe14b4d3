import { describe, expect, it } from 'vitest';
import { chunkFrames, compactFrames, expandFrames, FramesError, MAX_CHUNKS, MAX_FRAMES } from './frames.js';

describe('frame lists', () => {
  it('expands ranges, single frames and xN steps in order', () => {
    expect(expandFrames('1001-1005')).toEqual([1001, 1002, 1003, 1004, 1005]);
    expect(expandFrames('1-3,20-28x4, 7')).toEqual([1, 2, 3, 20, 24, 28, 7]);
    expect(expandFrames('5')).toEqual([5]);
    expect(expandFrames('1-10x20')).toEqual([1]);
  });

  it('refuses malformed, reversed, zero-step, duplicated, empty and oversized lists', () => {
    for (const bad of ['', ' ', '1-', '-1', 'a', '1-2-3', '1..5', '10-1', '1-10x0', '1-5,5', '1,1', `0-${MAX_FRAMES}`, '1-2x', '1,,2']) {
      expect(() => expandFrames(bad), bad).toThrow(FramesError);
    }
  });

  it('writes frames compactly: consecutive runs as A-B, others one by one', () => {
    expect(compactFrames([1001, 1002, 1003])).toBe('1001-1003');
    expect(compactFrames([20, 22, 24])).toBe('20,22,24');
    expect(compactFrames([1, 2, 5, 7, 8, 9])).toBe('1-2,5,7-9');
    expect(compactFrames([3])).toBe('3');
  });

  it('cuts the list into chunks of chunk_size consecutive frames of the list', () => {
    const chunks = chunkFrames('1001-1100', 10);
    expect(chunks).toHaveLength(10);
    expect(chunks[0]).toBe('1001-1010');
    expect(chunks[9]).toBe('1091-1100');
    expect(chunkFrames('1-10,20-40x2', 10)).toEqual(['1-10', '20,22,24,26,28,30,32,34,36,38', '40']);
    expect(chunkFrames('1-5', 2)).toEqual(['1-2', '3-4', '5']);
    expect(chunkFrames('1-5', 100)).toEqual(['1-5']);
    expect(chunkFrames(undefined, 10)).toEqual([null]);
    expect(() => chunkFrames(`1-${MAX_CHUNKS + 1}`, 1)).toThrow(/at most/);
  });
});
