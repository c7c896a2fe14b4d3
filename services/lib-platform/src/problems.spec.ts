import { describe, expect, it } from 'vitest';
import { AppError } from './errors.js';
import type { Problem } from './problems.js';
import { capProblems, clipEcho, leftOutBy, MAX_ECHO_CHARS, MAX_MSG_CHARS, MAX_PROBLEMS } from './problems.js';

const extra = (i: number, key = `k${i}`): Problem => ({ loc: ['data', key], msg: `Shot has no field '${key}'`, type: 'extra_forbidden' });

describe('clipEcho', () => {
  it('keeps a short string and clips a long one to 200 characters and an ellipsis', () => {
    expect(clipEcho('a'.repeat(MAX_ECHO_CHARS))).toBe('a'.repeat(200));
    expect(clipEcho('a'.repeat(100_000))).toBe(`${'a'.repeat(200)}…`);
    expect(clipEcho('abcdef', 3)).toBe('abc…');
  });
  it('never keeps half of a surrogate pair', () => {
    const clipped = clipEcho(`${'a'.repeat(199)}😀tail`);
    expect(clipped).toBe(`${'a'.repeat(199)}…`);
    expect(clipped.charCodeAt(clipped.length - 2)).toBe(0x61);
  });
});

describe('capProblems', () => {
  it('leaves a short list as it is', () => {
    const list = [extra(1), extra(2)];
    expect(capProblems(list)).toEqual(list);
  });
  it('keeps the first 100 and counts the rest in one too_many_errors entry', () => {
    const capped = capProblems(Array.from({ length: 40_000 }, (_, i) => extra(i)));
    expect(capped).toHaveLength(MAX_PROBLEMS + 1);
    expect(capped[99]).toEqual(extra(99));
    expect(capped[100]).toEqual({ loc: [], msg: '39900 more problems not listed (at most 100 are)', type: 'too_many_errors' });
    expect(leftOutBy(capped[100])).toBe(39_900);
  });
  it('locates the count at the source when the gateway made the list', () => {
    const list = Array.from({ length: 102 }, (_, i) => ({ loc: ['body', `k${i}`], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }));
    expect(capProblems(list).at(-1)).toEqual({ loc: ['body'], msg: '2 more problems not listed (at most 100 are)', type: 'too_many_errors' });
  });
  it('clips echoed keys in loc to 200 characters and a msg to 400', () => {
    const key = 'k'.repeat(100_000);
    const [p] = capProblems([extra(0, key), { loc: ['data', 'x', 3], msg: 'm'.repeat(5000), type: 'value_error' }]);
    expect(p).toEqual({ loc: ['data', `${'k'.repeat(200)}…`], msg: `Shot has no field '${'k'.repeat(MAX_MSG_CHARS - 19)}…`, type: 'extra_forbidden' });
    expect(capProblems([{ loc: ['data', 'x', 3], msg: 'm'.repeat(5000), type: 'value_error' }])[0]).toEqual({
      loc: ['data', 'x', 3],
      msg: `${'m'.repeat(400)}…`,
      type: 'value_error',
    });
  });
  it('caps an already capped list again with its count carried over', () => {
    const once = capProblems(Array.from({ length: 150 }, (_, i) => extra(i)));
    expect(capProblems(once)).toEqual(once);
    const twice = capProblems(once, 10);
    expect(twice).toHaveLength(11);
    expect(twice[10]).toEqual({ loc: [], msg: '140 more problems not listed (at most 10 are)', type: 'too_many_errors' });
  });
  it('is applied by AppError.invalid, where services make their 422s', () => {
    const err = AppError.invalid(Array.from({ length: 1000 }, (_, i) => extra(i, `${i}`.padEnd(300, 'k'))));
    expect(err.problems).toHaveLength(101);
    expect(err.problems.every((p) => p.loc.every((part) => String(part).length <= 201) && p.msg.length <= 401)).toBe(true);
    expect(err.problems[100]!.msg).toBe('900 more problems not listed (at most 100 are)');
  });
});
