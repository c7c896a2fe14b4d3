/**
 * The auth service's settings: the only place that reads the environment.
 */
import {
  commonConfig,
  envAddr,
  envInt,
  envPort,
  envSecretsKey,
  envSecretsKeysPrevious,
  envString,
  envUrl,
  loadConfig,
  parseConfig,
} from '@reelbase/lib-platform';

/** Every variable auth reads, with its default. */
export const authConfigShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its tables in its own schema, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** Port of the service's internal gRPC API. */
  GRPC_PORT: envPort(50051),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9101),
  /** records' gRPC address (host:port). */
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  /** Lifetime of a login token, in seconds. */
  JWT_TTL_SECONDS: envInt(43_200, 60),
  /** `iss` claim of the login tokens this service signs and accepts. */
  JWT_ISSUER: envString('reelbase'),
  /** scrypt N; a power of two. Production keeps the default; tests lower it for speed. */
  PASSWORD_SCRYPT_COST: envInt(32_768, 2, 1 << 20).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
  /** Failed logins allowed per email within one minute before further attempts get 429. */
  LOGIN_MAX_FAILURES: envInt(10, 1),
  /**
   * Key the private signing keys are encrypted with at rest: 32 bytes in base64 (required;
   * `npm start` keeps one in its data directory). docs/operations.md, "The secrets key".
   */
  SECRETS_KEY: envSecretsKey(),
  /** Earlier SECRETS_KEYs (comma-separated) that still decrypt, while a key rotation re-encrypts at start-up. */
  SECRETS_KEY_PREVIOUS: envSecretsKeysPrevious(),
  /** How long the gateway may cache a resolved principal. */
  PRINCIPAL_CACHE_SECONDS: envInt(5, 0, 3600),
  /** Live (not revoked, not expired) API keys a user may hold; one more is 409 `limit_reached`. */
  API_KEYS_PER_USER: envInt(100, 1, 100_000),
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
