import { describe, expect, it } from 'vitest';
import { ConfigError, commonConfig, envAddr, envPort, parseConfig } from './config.js';

describe('parseConfig', () => {
  const shape = { ...commonConfig, GRPC_PORT: envPort(50051), RECORDS_ADDR: envAddr('127.0.0.1:50052') };

  it('applies defaults, treating empty strings as unset', () => {
    const cfg = parseConfig(shape, { GRPC_PORT: '', LOG_LEVEL: 'debug' });
    expect(cfg.GRPC_PORT).toBe(50051);
    expect(cfg.LOG_LEVEL).toBe('debug');
    expect(cfg.NATS_URL).toBe('nats://127.0.0.1:4222');
  });

  it('reports every problem at once', () => {
    try {
      parseConfig(shape, { GRPC_PORT: 'abc', LOG_LEVEL: 'loud', NATS_URL: 'http://x', RECORDS_ADDR: 'nope' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const keys = (err as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(keys.sort()).toEqual(['GRPC_PORT', 'LOG_LEVEL', 'NATS_URL', 'RECORDS_ADDR']);
    }
  });
});
