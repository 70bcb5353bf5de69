import autocannon from 'autocannon';
import type { PlannedRequest } from '../bench/load.js';
import type { Answer, SoakTally } from './tally.js';
import type { MixedRequestKind } from '../bench/scenario-6-mixed.js';

/** Longer than any answer the service may take (its lock and connect limits are seconds): beyond it is a hang. */
export const HANG_SECONDS = 30;

export interface TrafficResult {
  readonly sent: number;
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** Latency of the 2xx answers (autocannon leaves the others out). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface Traffic {
  readonly finished: Promise<TrafficResult>;
  stop(): void;
}

type InFlight = Omit<Answer, 'status' | 'body'>;

/**
 * autocannon as a library, like bench/load.ts, but every answer goes to the tally as it arrives (the faults need
 * running counts) and every request carries its own X-Request-Id, which the service writes into the ledger.
 */
export function startTraffic(options: {
  url: string;
  connections: number;
  seconds: number;
  authorization: string;
  next: () => PlannedRequest;
  tally: SoakTally;
}): Traffic {
  let sequence = 0;
  let instance: autocannon.Instance | undefined;
  const finished = new Promise<TrafficResult>((resolve, reject) => {
    instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.seconds,
        timeout: HANG_SECONDS,
        headers: { authorization: options.authorization },
        requests: [
          {
            setupRequest: (request, context) => {
              const planned = options.next();
              const inFlight: InFlight = {
                kind: planned.kind as MixedRequestKind,
                method: planned.method ?? 'GET',
                path: planned.path,
                requestId: `soak-${++sequence}`,
              };
              Object.assign(context, { inFlight });
              return {
                ...request,
                method: inFlight.method as autocannon.Request['method'],
                path: planned.path,
                body: planned.body,
                headers: {
                  ...request.headers,
                  'x-request-id': inFlight.requestId,
                  ...(planned.body ? { 'content-type': 'application/json' } : {}),
                },
              };
            },
            onResponse: (status, body, context) => {
              const { inFlight } = context as { inFlight: InFlight };
              options.tally.recordAnswer({ ...inFlight, status, body });
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        resolve({
          sent: result.requests.sent,
          seconds: result.duration,
          requestsPerSecond: options.tally.answered() / result.duration,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          maxMs: result.latency.max,
        });
      },
    );
    instance.on('reqError', (error: Error & { code?: string }) => options.tally.recordFailure(error));
  });
  return { finished, stop: () => instance?.stop() };
}
