/**
 * Events of Admin-only configuration (docs/api-notes.md, "Events"): the event log is read by every
 * role (`GET /events`, the WebSocket, webhooks), while a schedule's target and the custom action
 * list are read by Admins only, and hold credentials (a chat webhook's URL is one). So their
 * events say that something changed, not what to: a target or an action shows its `kind`,
 * `has_url`, `has_secret`, `has_payload` and a `digest` of the value, never a URL, a secret or a
 * payload.
 *
 * The digest is an HMAC-SHA256 (hex) of the canonical JSON of the value, keyed with a key derived
 * from SECRETS_KEY: equal values give equal digests (a mirror tells a change from a repeat), and a
 * reader cannot confirm a guessed URL or secret by hashing it, as a plain SHA-256 would let them.
 */
import { createHmac } from 'node:crypto';
import { canonicalJson } from '@reelbase/lib-platform';

/** The digest of a configuration value, as events carry it. */
export type ConfigDigest = (value: unknown) => string;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The label the digest key is derived under, so it is never SECRETS_KEY itself. */
const DIGEST_KEY_LABEL = 'reelbase configuration event digest v1';

/** The digest keyed by `secretsKey` (the 32 bytes of SECRETS_KEY). */
export function configDigest(secretsKey: Buffer): ConfigDigest {
  const key = createHmac('sha256', secretsKey).update(DIGEST_KEY_LABEL, 'utf8').digest();
  return (value) => createHmac('sha256', key).update(canonicalJson(value), 'utf8').digest('hex');
}

/** Strings shorter than this are not looked for in text (they would match ordinary words). */
const HIDDEN_MIN_CHARS = 8;

/**
 * `text` with every occurrence of each hidden string replaced by `[hidden]` (for a message that
 * may quote what it failed on, such as a target's error).
 */
export function redacted(text: string, hidden: readonly string[]): string {
  let out = text;
  const longestFirst = [...new Set(hidden)].filter((h) => h.length >= HIDDEN_MIN_CHARS).sort((a, b) => b.length - a.length);
  for (const h of longestFirst) out = out.split(h).join('[hidden]');
  return out;
}

/** Every string inside a JSON value (keys and values), for {@link redacted}. */
export function stringsOf(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsOf(x, out);
  else if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      stringsOf(x, out);
    }
  }
  return out;
}
