/**
 * Isolation on a shared NATS server: every run uses its own prefix for stream names and
 * subjects (NATS_PREFIX) and removes its streams afterwards.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

/** A fresh prefix such as `t_m3x9a1_4f2c_`. */
export function uniquePrefix(tag = 't'): string {
  return `${tag}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}_`;
}

/** Deletes every stream whose name starts with `prefix`. */
export async function deleteStreams(prefix: string, url: string = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL): Promise<void> {
  if (!prefix) throw new Error('refusing to delete streams without a prefix');
  const nc = await connect({ servers: url, timeout: 3000 });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const name of jsm.streams.names()) {
      if (name.startsWith(prefix)) await jsm.streams.delete(name);
    }
  } finally {
    await nc.close();
  }
}

/** True when a NATS server accepts a connection at `url`. */
export async function natsAnswers(url: string, timeoutMs = 1500): Promise<boolean> {
  try {
    const nc = await connect({ servers: url, timeout: timeoutMs, reconnect: false });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

/** Names of the streams whose name starts with `prefix` (every stream when it is empty). */
export async function streamNames(prefix: string, url: string = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL): Promise<string[]> {
  const nc = await connect({ servers: url, timeout: 3000 });
  try {
    const jsm = await jetstreamManager(nc);
    const out: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) out.push(name);
    return out.sort();
  } finally {
    await nc.close();
  }
}
