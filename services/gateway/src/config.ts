/**
 * The gateway's settings: the only reader of process.env in this package.
 */
import { commonConfig, envAddr, envInt, envPort, loadConfig, parseConfig } from '@reelbase/lib-platform';
import type { z } from 'zod';

export const gatewayConfigShape = {
  ...commonConfig,
  GATEWAY_PORT: envPort(8080),
  /** The ops port: /healthz, /readyz and unauthenticated /metrics for Prometheus (not public). */
  HTTP_PORT: envPort(9100),
  AUTH_ADDR: envAddr('127.0.0.1:50051'),
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  EVENTS_ADDR: envAddr('127.0.0.1:50053'),
  /** Sustained requests per second per token. */
  RATE_LIMIT_RPS: envInt(50, 1),
  /** Requests a token may make at once above the sustained rate. */
  RATE_LIMIT_BURST: envInt(200, 1),
  /** Upper bound on how long a resolved token is trusted without asking auth again. */
  AUTH_CACHE_SECONDS: envInt(5, 0, 3600),
  WS_PING_SECONDS: envInt(30, 1, 3600),
  RPC_DEADLINE_MS: envInt(5000, 50, 120_000),
  BODY_LIMIT_BYTES: envInt(1_048_576, 1024),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayConfigShape>>;

/** Reads the environment; prints every problem and exits 78 when it is invalid. */
export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  return loadConfig('gateway', gatewayConfigShape, env);
}

/** Parses `env` (throws ConfigError); tests use it to get defaults with overrides. */
export function parseGatewayConfig(env: Record<string, string | undefined> = {}): GatewayConfig {
  return parseConfig(gatewayConfigShape, env);
}
