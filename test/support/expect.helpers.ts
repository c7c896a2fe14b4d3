/**
 * Assertions on the error shapes (docs/api-notes.md, Errors).
 */
import { expect } from 'vitest';
import type { ApiResponse } from './api.client.js';

/** `{"detail": "<sentence>", "code": "<code>"}` with the given status. */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.body }, res.text).toMatchObject({ status, body: { code } });
  expect(typeof res.body.detail).toBe('string');
}

/**
 * A 422 in the FastAPI shape `{"detail": [{"loc": [...], "msg", "type"}]}` with one entry whose
 * `loc` starts with `locPrefix` (and mentions `mention` in its loc or msg when given).
 */
export function expectValidation(res: ApiResponse, locPrefix: Array<string | number>, mention?: string): void {
  expect(res.status, res.text).toBe(422);
  const detail = res.body?.detail;
  expect(Array.isArray(detail), res.text).toBe(true);
  expect(detail.length).toBeGreaterThan(0);
  for (const d of detail) {
    expect(Array.isArray(d.loc), res.text).toBe(true);
    expect(['body', 'query', 'path', 'header']).toContain(d.loc[0]);
    expect(typeof d.msg).toBe('string');
    expect(typeof d.type).toBe('string');
  }
  const hit = detail.find(
    (d: any) =>
      locPrefix.every((p, i) => d.loc[i] === p) && (mention === undefined || JSON.stringify(d.loc).includes(mention) || String(d.msg).includes(mention)),
  );
  expect(hit, `no 422 entry at ${JSON.stringify(locPrefix)}${mention ? ` mentioning ${mention}` : ''}: ${res.text}`).toBeDefined();
}
