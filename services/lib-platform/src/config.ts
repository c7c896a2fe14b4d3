/**
 * The one validated read of the environment. Each service declares a zod shape; every
 * problem is reported at once and the process exits non-zero before doing any work.
 */
import { z } from 'zod';
import { INTERNAL_AUTH_MIN_SECRET_BYTES, isInternalAuthSecret } from './grpc/internal.auth.js';

/** An integer environment variable with a default. */
export const envInt = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

/** A TCP port with a default. */
export const envPort = (def: number) => envInt(def, 0, 65535);

/** A boolean written as 1/0/true/false/yes/no. */
export const envBool = (def: boolean) =>
  z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
    .default(def ? 'true' : 'false')
    .transform((v) => v === '1' || v === 'true' || v === 'yes');

/** A non-empty string with a default (names, issuers, labels). */
export const envString = (def: string) => z.string().min(1).default(def);

/** One of a fixed set of values; `undefined` when unset (switches that are off by default). */
export const envOptionalEnum = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values).optional();

/** A `host:port` gRPC target. */
export const envAddr = (def: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'must be host:port')
    .default(def);

/** A URL with one of the given protocols. */
export const envUrl = (def: string | undefined, protocols: string[]) => {
  const s = z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol.replace(/:$/, ''));
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );
  return def === undefined ? s : s.default(def);
};

/** Settings every service shares. */
export const commonConfig = {
  /** Least severe level written to the JSON log on stdout. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** NATS server with JetStream (`nats://` or `tls://`). */
  NATS_URL: envUrl('nats://127.0.0.1:4222', ['nats', 'tls']),
  /** Prefix for stream names and subjects, so several stacks can share one NATS server. */
  NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_]*$/, 'letters, digits and _ only')
    .default(''),
  /** Milliseconds allowed for a graceful stop before the process exits anyway. */
  SHUTDOWN_TIMEOUT_MS: envInt(10_000, 100),
  /**
   * Shared key that signs internal gRPC calls (at least 32 bytes; required). A service accepts
   * a caller's principal only with a valid signature (docs/architecture.md, "Internal calls").
   */
  INTERNAL_AUTH_SECRET: z
    .string({ error: 'is required: the shared key of internal calls (at least 32 bytes, e.g. `openssl rand -base64 32`)' })
    .refine(isInternalAuthSecret, `must be at least ${INTERNAL_AUTH_MIN_SECRET_BYTES} bytes`),
  /** Interface the internal gRPC and ops ports listen on; `npm start` sets 127.0.0.1. */
  BIND_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:\-]+$/, 'must be an IP address or host name')
    .default('0.0.0.0'),
};

/** Thrown (by {@link parseConfig}) with every problem found. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** Parses `env` against `shape`, collecting every problem into one {@link ConfigError}. */
export function parseConfig<S extends z.ZodRawShape>(shape: S, env: Record<string, string | undefined> = process.env): z.infer<z.ZodObject<S>> {
  // Empty strings mean "unset" so defaults apply (a common shell and Helm idiom).
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') cleaned[key] = v;
  }
  const result = z.object(shape).safeParse(cleaned);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new ConfigError(problems);
}

/** Like {@link parseConfig} but prints every problem and exits with status 78 (EX_CONFIG). */
export function loadConfig<S extends z.ZodRawShape>(service: string, shape: S, env: Record<string, string | undefined> = process.env): z.infer<z.ZodObject<S>> {
  try {
    return parseConfig(shape, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${JSON.stringify({ level: 'fatal', service, msg: 'invalid configuration', problems: err.problems })}\n`);
      process.exit(78);
    }
    throw err;
  }
}
