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

const SECRET_PARAMS = /([?&](?:token|access_token|api_key|password)=)[^&#]*/gi;

/** Replaces the values of credential-bearing query parameters with `[redacted]`. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}
