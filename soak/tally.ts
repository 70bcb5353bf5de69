import { allocationTally, type AllocationTally } from '../bench/scenario-4-allocation.js';
import { MIXED_EXPECTED_STATUSES, type MixedRequestKind } from '../bench/scenario-6-mixed.js';

export interface Answer {
  readonly kind: MixedRequestKind;
  readonly method: string;
  readonly path: string;
  readonly requestId: string;
  readonly status: number;
  readonly body: string;
}

/** Every way a request can go wrong; the first four are what the injected faults are expected to cause. */
export const ERROR_CLASSES = [
  'server declined (503)',
  'connection refused (proxy 502)',
  'connection lost (proxy 502)',
  'connection error',
  'timeout',
  'internal error (500)',
  'other 5xx',
  'unexpected 4xx',
  'unexpected status',
] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];
export const FAULT_EFFECTS: readonly ErrorClass[] = [
  'server declined (503)',
  'connection refused (proxy 502)',
  'connection lost (proxy 502)',
  'connection error',
];

export type ErrorCounts = Record<ErrorClass, number>;

/** An answer that is neither expected nor a fault's effect, kept to reproduce it. */
export interface Sample extends Omit<Answer, 'body'> {
  readonly atSeconds: number;
  readonly body: string;
}

const MAX_SAMPLES = 20;

export interface SoakTally {
  recordAnswer(answer: Answer): void;
  /** A request that got no HTTP answer at all (socket error, or no answer within the time limit). */
  recordFailure(error: Error & { code?: string }): void;
  readonly statusesByKind: Record<string, Record<string, number>>;
  readonly errors: ErrorCounts;
  readonly connectionErrorCodes: Record<string, number>;
  readonly samples: Sample[];
  /** Request ids of the moves answered 204: each must have left its ledger rows. */
  readonly acknowledgedMoves: string[];
  /** When each move answered 204 and each allocation answered 200 arrived (Date.now()), in arrival order. */
  readonly writesAcknowledgedAt: number[];
  /** What the allocations answered 200 reserved, by reservation id. */
  readonly allocations: AllocationTally;
  answered(): number;
}

function classify(answer: Answer): ErrorClass | undefined {
  const { status } = answer;
  if (MIXED_EXPECTED_STATUSES[answer.kind].includes(status)) return undefined;
  if (status === 503) return 'server declined (503)';
  // The proxy's own answers (`proxy: <socket error>`) when it could not reach or lost the instance; a 502 from the
  // service itself is a bug.
  if (status === 502 && answer.body.startsWith('proxy: connect ')) return 'connection refused (proxy 502)';
  if (status === 502 && answer.body.startsWith('proxy: ')) return 'connection lost (proxy 502)';
  if (status === 500) return 'internal error (500)';
  if (status >= 500) return 'other 5xx';
  if (status >= 400) return 'unexpected 4xx';
  return 'unexpected status';
}

export function soakTally(startedAt: number): SoakTally {
  const errors = Object.fromEntries(ERROR_CLASSES.map((name) => [name, 0])) as ErrorCounts;
  const statusesByKind: Record<string, Record<string, number>> = {};
  const connectionErrorCodes: Record<string, number> = {};
  const samples: Sample[] = [];
  const acknowledgedMoves: string[] = [];
  const writesAcknowledgedAt: number[] = [];
  const allocations = allocationTally();
  let answered = 0;
  return {
    statusesByKind,
    errors,
    connectionErrorCodes,
    samples,
    acknowledgedMoves,
    writesAcknowledgedAt,
    allocations,
    recordAnswer(answer) {
      answered++;
      const counts = (statusesByKind[answer.kind] ??= {});
      counts[answer.status] = (counts[answer.status] ?? 0) + 1;
      if (answer.kind === 'allocate') allocations.record(answer.status, answer.body);
      if (answer.kind === 'move' && answer.status === 204) acknowledgedMoves.push(answer.requestId);
      if ((answer.kind === 'move' && answer.status === 204) || (answer.kind === 'allocate' && answer.status === 200)) {
        writesAcknowledgedAt.push(Date.now());
      }
      const error = classify(answer);
      if (error === undefined) return;
      errors[error]++;
      if (!FAULT_EFFECTS.includes(error) && samples.length < MAX_SAMPLES) {
        const atSeconds = Math.round((Date.now() - startedAt) / 100) / 10;
        samples.push({ ...answer, atSeconds, body: answer.body.slice(0, 500) });
      }
    },
    recordFailure(error) {
      if (error.message === 'request timed out') {
        errors.timeout++;
        return;
      }
      errors['connection error']++;
      const code = error.code ?? error.message;
      connectionErrorCodes[code] = (connectionErrorCodes[code] ?? 0) + 1;
    },
    answered: () => answered,
  };
}
