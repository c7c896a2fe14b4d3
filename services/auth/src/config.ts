/**
 * The auth service's settings: the only place that reads the environment.
 */
import { commonConfig, envAddr, envInt, envPort, envString, envUrl, loadConfig, parseConfig } from '@reelbase/lib-platform';

/** Every variable auth reads, with its default. */
export const authConfigShape = {
  ...commonConfig,
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  GRPC_PORT: envPort(50051),
  HTTP_PORT: envPort(9101),
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  JWT_TTL_SECONDS: envInt(43_200, 60),
  JWT_ISSUER: envString('reelbase'),
  /** scrypt N; a power of two. Production keeps the default; tests lower it for speed. */
  PASSWORD_SCRYPT_COST: envInt(32_768, 2, 1 << 20).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
  /** Failed logins allowed per email within one minute before further attempts get 429. */
  LOGIN_MAX_FAILURES: envInt(10, 1),
  /** How long the gateway may cache a resolved principal. */
  PRINCIPAL_CACHE_SECONDS: envInt(5, 0, 3600),
};

export type AuthConfig = ReturnType<typeof parseAuthConfig>;

/** Parses `env`; throws a ConfigError listing every problem. */
export function parseAuthConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(authConfigShape, env);
}

/** Reads the process environment; prints every problem and exits 78 when it is invalid. */
export function loadAuthConfig(): AuthConfig {
  return loadConfig('auth', authConfigShape, process.env);
}
