/**
 * Structured JSON logs (pino). Every line names its service; request-scoped lines carry
 * `request_id`. Credentials never reach a log: headers are redacted by path and URLs pass
 * through {@link redactUrl} before they are logged.
 */
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Creates the root logger of a service. */
export function createLogger(service: string, level: LevelWithSilent = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-share-password"]',
          'req.headers["x-share-session"]',
          'res.headers["x-share-session"]',
          'headers.authorization',
          'password',
          'token',
          '*.password',
          '*.token',
          '*.access_token',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * Path segments that are secrets themselves: the share token after `/shared/`, `/share/` and
 * `/review/`, the sealed part of a guest's media key after `/media/sh/` (docs/review.md), and the
 * one-time launch token after `/actions/launch/` (docs/api-notes.md, "Actions"). Only its first 6
 * characters stay, enough to tell links apart.
 */
const SECRET_PATH = /^(\/(?:shared|share|review|media\/sh|actions\/launch)\/)([^/?#]+)/i;
const SECRET_PATH_KEEP = 6;

/**
 * The path as a router may read it: escapes decoded and repeated slashes and `.` segments
 * dropped, so that a spelling the route does not match (a 404 whose token is still live) is
 * recognised too. Undecodable escapes are left as they are.
 */
function plainPath(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // a stray % is kept as it is
  }
  return decoded.replace(/\/(?:\.?\/)+/g, '/');
}

/** `path` with a secret segment (share, review, guest media or launch token) cut to its first characters. */
export function redactPathSecrets(path: string): string {
  let m = SECRET_PATH.exec(path);
  if (!m) {
    const plain = plainPath(path);
    m = SECRET_PATH.exec(plain);
    if (!m) return path;
    path = plain;
  }
  const secret = m[2]!;
  if (secret.length <= SECRET_PATH_KEEP) return path;
  return `${m[1]}${secret.slice(0, SECRET_PATH_KEEP)}[redacted]${path.slice(m[0].length)}`;
}

const SECRET_PARAMS: ReadonlySet<string> = new Set(['token', 'access_token', 'api_key', 'password']);

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/**
 * Replaces the values of credential-bearing query parameters with `[redacted]`. Names are
 * compared decoded (`%74oken` is `token` to the server, so it is to this function too).
 */
export function redactUrl(url: string): string {
  const q0 = url.indexOf('?');
  const pathEnd = q0 === -1 ? url.length : q0;
  const path = redactPathSecrets(url.slice(0, pathEnd));
  if (path.length !== pathEnd) url = path + url.slice(pathEnd);
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const end = hash === -1 ? url.length : hash;
  const query = url
    .slice(q + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return SECRET_PARAMS.has(decodedName(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, q + 1)}${query}${url.slice(end)}`;
}
