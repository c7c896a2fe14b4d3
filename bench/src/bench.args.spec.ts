import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from './bench.args.js';

describe('parseBenchArgs', () => {
  it('defaults to 1, 8 and 32 clients in two blocks of 5 s, 300 writes/s for 20 s', () => {
    expect(parseBenchArgs([])).toEqual({
      duration: 5,
      blocks: 2,
      warmup: 2,
      clients: [1, 8, 32],
      wsRate: 300,
      wsSeconds: 20,
      skipWs: false,
      skipGateway: false,
      wrkThreads: 1,
      pool: 16,
      logLevel: 'warn',
    });
  });

  it('reads every flag', () => {
    const o = parseBenchArgs(['--duration', '5', '--blocks', '3', '--warmup', '0', '--clients', '4, 8', '--ws-rate', '100', '--ws-seconds', '3', '--skip-ws']);
    expect(o).toMatchObject({ duration: 5, blocks: 3, warmup: 0, clients: [4, 8], wsRate: 100, wsSeconds: 3, skipWs: true });
  });

  it('implies --skip-ws with --skip-gateway', () => {
    expect(parseBenchArgs(['--skip-gateway']).skipWs).toBe(true);
  });

  it('rejects unknown flags and bad numbers', () => {
    expect(() => parseBenchArgs(['--nope'])).toThrow();
    expect(() => parseBenchArgs(['--duration', 'x'])).toThrow(/--duration/);
    expect(() => parseBenchArgs(['--clients', '1,2.5'])).toThrow(/whole numbers/);
    expect(() => parseBenchArgs(['--ws-rate', '-3'])).toThrow(/--ws-rate/);
  });
});
