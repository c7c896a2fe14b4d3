/**
 * The gateway's settings: the only reader of process.env in this package.
 */
import { commonConfig, envAddr, envInt, envPort, envUrl, loadConfig, mediaPolicy, parseConfig } from '@reelbase/lib-platform';
import type { z } from 'zod';

export const gatewayConfigShape = {
  ...commonConfig,
  /** Port of the public HTTP and WebSocket API. */
  GATEWAY_PORT: envPort(8080),
  /** The ops port: /healthz, /readyz and unauthenticated /metrics for Prometheus (not public). */
  HTTP_PORT: envPort(9100),
  /** auth's gRPC address (host:port). */
  AUTH_ADDR: envAddr('127.0.0.1:50051'),
  /** records' gRPC address (host:port). */
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  /** events' gRPC address (host:port). */
  EVENTS_ADDR: envAddr('127.0.0.1:50053'),
  /** schema's gRPC address (host:port): the schema and catalog routes. */
  SCHEMA_ADDR: envAddr('127.0.0.1:50054'),
  /** media-transcode's gRPC address (host:port): reviewable uploads and status, media reads. */
  MEDIA_TRANSCODE_ADDR: envAddr('127.0.0.1:50055'),
  /** Largest reviewable upload in bytes (8 GiB; then 413 `payload_too_large`). */
  MEDIA_MAX_BYTES: envInt(mediaPolicy.MEDIA_MAX_BYTES_DEFAULT, 1),
  /**
   * Longest pause in an upload's body, and in a media read from the store, before it is given
   * up (408 for the client's body; the stream is cut for a read): uploads may take as long as
   * they need while bytes keep coming.
   */
  MEDIA_IDLE_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  /** notifier's gRPC address (host:port): the notification and webhook routes. */
  NOTIFIER_ADDR: envAddr('127.0.0.1:50056'),
  /** Sustained requests per second per principal (user or API key). */
  RATE_LIMIT_RPS: envInt(50, 1),
  /** Requests a principal may make at once above the sustained rate. */
  RATE_LIMIT_BURST: envInt(200, 1),
  /** Live `Idempotency-Key`s (each kept 24 hours) a principal may hold; a new key beyond it is 429 (0: no limit). */
  IDEMPOTENCY_MAX_KEYS: envInt(10_000, 0, 10_000_000),
  /** Upper bound on how long a resolved token is trusted without asking auth again. */
  AUTH_CACHE_SECONDS: envInt(5, 0, 3600),
  /** How long a refused token is answered 401 without asking auth again (0: never). */
  AUTH_NEGATIVE_CACHE_SECONDS: envInt(10, 0, 3600),
  /** Most refused tokens remembered at once (oldest forgotten first). */
  AUTH_NEGATIVE_CACHE_MAX: envInt(10_000, 0, 10_000_000),
  /** Requests with a refused bearer token allowed per second per client address (then 429). */
  AUTH_FAILURE_RPS: envInt(5, 1),
  /** Refused-token requests a client address may make at once above that rate. */
  AUTH_FAILURE_BURST: envInt(50, 1),
  /** Login attempts per client address per minute (a successful login is not counted); then 429. */
  LOGIN_RATE_PER_MINUTE: envInt(20, 1),
  /**
   * The origin guests reach the gateway at (e.g. https://review.studio.example), used in the `url` of a new
   * share link; unset: the scheme and Host of the request that created the link.
   */
  PUBLIC_URL: envUrl(undefined, ['http', 'https']).optional(),
  /** Notes guests may post per share link per minute (then 429 with Retry-After). */
  SHARE_NOTES_PER_MINUTE: envInt(30, 1),
  /**
   * Missing or wrong passwords per share link per minute before the link answers 429 for a while; each password
   * is charged before it is verified and refunded unless it was wrong.
   */
  SHARE_PASSWORD_FAILURES_PER_MINUTE: envInt(20, 1),
  /** How long a guest session answered after a correct share-link password stands in for it (seconds). */
  SHARE_SESSION_SECONDS: envInt(1800, 60, 86_400),
  /** How long the media keys of a `GET /shared/{token}` answer open (seconds; the link must stay live too). */
  SHARE_MEDIA_KEY_SECONDS: envInt(14_400, 60, 86_400),
  /** WebSocket connects per second per client address. */
  WS_CONNECT_RPS: envInt(5, 1),
  /** WebSocket connects a client address may make at once above that rate. */
  WS_CONNECT_BURST: envInt(50, 1),
  /** Open WebSockets this gateway accepts in all (further connects: 503). */
  WS_MAX_CONNECTIONS: envInt(10_000, 1),
  /**
   * Longest time a client may take to send its headers, and then its body (then 408 and the
   * socket is closed): a body trickled a byte at a time cannot hold a socket for long. An
   * upload's body is bounded by MEDIA_IDLE_TIMEOUT_MS between bytes instead.
   */
  REQUEST_TIMEOUT_MS: envInt(30_000, 1000, 600_000),
  /** 422 answers list at most this many problems, then one entry saying how many more there were. */
  MAX_PROBLEMS: envInt(100, 1, 100_000),
  /**
   * Reverse proxies in front of the gateway whose `X-Forwarded-For` entries are trusted when
   * telling client addresses apart (0: the socket's peer address is the client).
   */
  TRUST_PROXY_HOPS: envInt(0, 0, 10),
  /** Seconds between pings on each open WebSocket; a socket that has not answered the last one is closed. */
  WS_PING_SECONDS: envInt(30, 1, 3600),
  /**
   * Milliseconds between re-checks of every open WebSocket's token or API key with auth (past the
   * cache), so a socket whose credential was revoked is closed (1008) even when the revocation
   * message was lost. At most 60000.
   */
  WS_PRINCIPAL_RECHECK_MS: envInt(60_000, 100, 60_000),
  /** Deadline of each gRPC call to auth, records, events and notifier. */
  RPC_DEADLINE_MS: envInt(5000, 50, 120_000),
  /**
   * Deadline of each gRPC call to schema: a schema change answers once its cascade is applied (a rename
   * rewrites every record that uses the code), so it may take longer than an ordinary call.
   */
  SCHEMA_RPC_DEADLINE_MS: envInt(120_000, 50, 600_000),
  /** Largest request body accepted (then 413): 2 MiB, room for a filter with a 1 MiB value or an `in` list of tens of thousands of ids. */
  BODY_LIMIT_BYTES: envInt(2_097_152, 1024),
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
