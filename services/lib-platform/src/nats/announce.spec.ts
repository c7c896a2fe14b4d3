import { describe, expect, it } from 'vitest';
import type { Logger } from '../logger.js';
import { announce } from './announce.js';
import type { NatsConnection } from './connection.js';

describe('announce', () => {
  it('gives up waiting after timeoutMs when the server never answers the flush, and logs the payload', async () => {
    const published: [string, string][] = [];
    const nc = {
      publish: (subject: string, data: string) => published.push([subject, data]),
      flush: () => new Promise<void>(() => {}),
    } as unknown as NatsConnection;
    const warnings: [Record<string, unknown>, string][] = [];
    const logger = { warn: (fields: Record<string, unknown>, msg: string) => warnings.push([fields, msg]) } as unknown as Logger;
    const started = Date.now();
    expect(await announce(nc, 'auth.revocations', { user_id: 'u' }, { logger, failure: 'not announced', timeoutMs: 50 })).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(published).toEqual([['auth.revocations', '{"user_id":"u"}']]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]![1]).toBe('not announced');
    expect(warnings[0]![0]).toMatchObject({ user_id: 'u' });
    expect(String(warnings[0]![0].err)).toMatch(/flush timed out/);
  });
});
