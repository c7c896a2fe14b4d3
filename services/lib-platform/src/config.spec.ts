import { describe, expect, it } from 'vitest';
import { ConfigError, commonConfig, envAddr, envPort, parseConfig } from './config.js';

describe('parseConfig', () => {
  const shape = { ...commonConfig, GRPC_PORT: envPort(50051), RECORDS_ADDR: envAddr('127.0.0.1:50052') };
  const INTERNAL_AUTH_SECRET = 'config-test-internal-auth-secret-0123456789';

  it('applies defaults, treating empty strings as unset', () => {
    const cfg = parseConfig(shape, { GRPC_PORT: '', LOG_LEVEL: 'debug', INTERNAL_AUTH_SECRET });
    expect(cfg.GRPC_PORT).toBe(50051);
    expect(cfg.LOG_LEVEL).toBe('debug');
    expect(cfg.NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(cfg.BIND_HOST).toBe('0.0.0.0');
  });

  it('requires an INTERNAL_AUTH_SECRET of at least 32 bytes', () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseConfig(shape, env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({})).toEqual([expect.stringMatching(/^INTERNAL_AUTH_SECRET: is required/)]);
    expect(problems({ INTERNAL_AUTH_SECRET: 'x'.repeat(31) })).toEqual(['INTERNAL_AUTH_SECRET: must be at least 32 bytes']);
    // Bytes, not characters.
    expect(problems({ INTERNAL_AUTH_SECRET: 'é'.repeat(16) })).toEqual([]);
    expect(parseConfig(shape, { INTERNAL_AUTH_SECRET, BIND_HOST: '127.0.0.1' }).BIND_HOST).toBe('127.0.0.1');
  });

  it('reports every problem at once', () => {
    try {
      parseConfig(shape, { GRPC_PORT: 'abc', LOG_LEVEL: 'loud', NATS_URL: 'http://x', RECORDS_ADDR: 'nope', INTERNAL_AUTH_SECRET });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const keys = (err as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(keys.sort()).toEqual(['GRPC_PORT', 'LOG_LEVEL', 'NATS_URL', 'RECORDS_ADDR']);
    }
  });
});
