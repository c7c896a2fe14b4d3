import { describe, expect, it } from 'vitest';
import { ConfigError } from '@reelbase/lib-platform';
import { parseAuthConfig } from './config.js';

const INTERNAL_AUTH_SECRET = 'auth-config-test-internal-auth-secret-0123456789';
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');

describe('auth config', () => {
  it('has the documented defaults', () => {
    expect(parseAuthConfig({ INTERNAL_AUTH_SECRET, SECRETS_KEY })).toMatchObject({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/reelbase',
      GRPC_PORT: 50051,
      HTTP_PORT: 9101,
      RECORDS_ADDR: '127.0.0.1:50052',
      JWT_TTL_SECONDS: 43_200,
      JWT_ISSUER: 'reelbase',
      PASSWORD_SCRYPT_COST: 32_768,
      LOGIN_MAX_FAILURES: 10,
      PRINCIPAL_CACHE_SECONDS: 5,
      NATS_PREFIX: '',
      BIND_HOST: '0.0.0.0',
      SECRETS_KEY,
    });
  });

  it('requires a 32-byte SECRETS_KEY, saying how to make one', () => {
    expect(() => parseAuthConfig({ INTERNAL_AUTH_SECRET })).toThrow(/SECRETS_KEY: is required: .*openssl rand -base64 32/);
    expect(() => parseAuthConfig({ INTERNAL_AUTH_SECRET, SECRETS_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/SECRETS_KEY: must be 32 bytes/);
  });

  it('requires the internal secret', () => {
    expect(() => parseAuthConfig({})).toThrow(/INTERNAL_AUTH_SECRET: is required/);
  });

  it('reports every problem at once', () => {
    try {
      parseAuthConfig({
        PASSWORD_SCRYPT_COST: '1000',
        RECORDS_ADDR: 'nope',
        DATABASE_URL: 'mysql://x/y',
        LOGIN_MAX_FAILURES: '0',
        INTERNAL_AUTH_SECRET,
        SECRETS_KEY,
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const names = (err as ConfigError).problems.map((p) => p.split(':')[0]).sort();
      expect(names).toEqual(['DATABASE_URL', 'LOGIN_MAX_FAILURES', 'PASSWORD_SCRYPT_COST', 'RECORDS_ADDR']);
    }
  });
});
