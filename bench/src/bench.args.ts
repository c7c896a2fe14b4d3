/**
 * Command-line flags of `npm run bench`.
 */
import { parseArgs } from 'node:util';

/** Everything a run can be told. */
export interface BenchOptions {
  /** Seconds of each measured block of a contender. */
  duration: number;
  /** Measured blocks per contender and client count, run alternating with the other contenders'. */
  blocks: number;
  /** Seconds of unmeasured load of each contender before its first block. */
  warmup: number;
  clients: number[];
  wsRate: number;
  wsSeconds: number;
  skipWs: boolean;
  /** pgbench and the baseline only, without starting the stack. */
  skipGateway: boolean;
  wrkThreads: number;
  /** pg pool size of the baseline. */
  pool: number;
  /** LOG_LEVEL of the services (their logs go to files, listed at the end). */
  logLevel: string;
}

export const USAGE = `usage: npm run bench -- [--duration 5] [--blocks 2] [--warmup 2] [--clients 1,8,32] [--ws-rate 300]
                      [--ws-seconds 20] [--skip-ws] [--skip-gateway] [--wrk-threads 1] [--pool 16] [--log-level warn]`;

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`);
  return n;
}

/** Parses argv (without node and the script); throws with a readable message on bad input. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      duration: { type: 'string' },
      blocks: { type: 'string' },
      warmup: { type: 'string' },
      clients: { type: 'string' },
      'ws-rate': { type: 'string' },
      'ws-seconds': { type: 'string' },
      'skip-ws': { type: 'boolean', default: false },
      'skip-gateway': { type: 'boolean', default: false },
      'wrk-threads': { type: 'string' },
      pool: { type: 'string' },
      'log-level': { type: 'string', default: 'warn' },
    },
  });
  const clients = (values.clients ?? '1,8,32').split(',').map((c) => positive('clients', c.trim(), 0));
  if (clients.some((c) => !Number.isInteger(c))) throw new Error(`--clients must be whole numbers, got ${values.clients}`);
  const warmup = values.warmup === '0' ? 0 : positive('warmup', values.warmup, 2);
  return {
    duration: Math.round(positive('duration', values.duration, 5)),
    blocks: Math.round(positive('blocks', values.blocks, 2)),
    warmup: Math.round(warmup),
    clients,
    wsRate: positive('ws-rate', values['ws-rate'], 300),
    wsSeconds: positive('ws-seconds', values['ws-seconds'], 20),
    skipWs: values['skip-ws'] || values['skip-gateway'],
    skipGateway: values['skip-gateway'],
    wrkThreads: Math.round(positive('wrk-threads', values['wrk-threads'], 1)),
    pool: Math.round(positive('pool', values.pool, 16)),
    logLevel: values['log-level'],
  };
}
