import type { Logger } from 'pino';

/**
 * One Ctrl-C reaches the service twice: the terminal signals its whole process group, and `npm start` passes the
 * same SIGINT on to its child. A repeat this soon after the first signal is that echo, not a second request.
 */
const ECHO_WINDOW_MS = 1000;

/**
 * D36: SIGTERM and SIGINT (Ctrl-C) both start the graceful shutdown. A second signal, once the echo window has
 * passed, ends the process at once: the operator asked twice.
 */
export function onStopSignals(logger: Logger, stop: (signal: NodeJS.Signals) => void): void {
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      stop(signal);
    } else if (Date.now() - firstAt >= ECHO_WINDOW_MS) {
      logger.warn({ signal }, 'second signal: exiting immediately');
      process.exit(1);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
