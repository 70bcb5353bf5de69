import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { activeTraceFields } from './tracing/context.js';

/** With tracing on, every line written within a trace names it (D36); off, lines are built without looking. */
export function createLogger(config: Pick<Config, 'logLevel' | 'tracing'>): Logger {
  return pino({
    level: config.logLevel,
    ...(config.tracing ? { mixin: activeTraceFields } : {}),
    base: { service: 'inventory-service' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.password'], censor: '[REDACTED]' },
  });
}
