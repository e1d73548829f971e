/** The process logger (pino). Secrets never reach the log: auth headers, keys and passwords are redacted. */
import { destination, pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.key',
  '*.secret',
  '*.api_key',
  '*.access_token',
  '*.refresh_token',
];

/** `destination`: stdout unless given (a worker thread hands its lines to the main thread's logger). */
export function createLogger(level: string, stream?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'switchyard' } };
  return stream ? pino(options, stream) : pino(options);
}

/** A one-shot command's logger: lines go to stderr, so that stdout holds only the command's output. */
export function createCommandLogger(level: string): Logger {
  return createLogger(level, destination(2));
}
