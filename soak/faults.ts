import { sleep } from '../test/reliability/harness.js';
import { waitUntilAllAnswer, type SoakCluster } from './cluster.js';
import type { ShutdownMode, SoakDatabase } from './database.js';
import { clock, describeExit, nonZero } from './format.js';
import { ERROR_CLASSES, type ErrorCounts, type SoakTally } from './tally.js';

/** Database and instance faults take turns; each kind comes in its harsh and its gentle form. */
type Fault =
  | { readonly kind: string; readonly shutdown: ShutdownMode }
  | { readonly kind: string; readonly signal: 'SIGKILL' | 'SIGTERM' }
  | { readonly kind: string; readonly replica: 'stop' };
const ROTATION: readonly Fault[] = [
  { kind: 'database restart, fast shutdown', shutdown: 'fast' },
  { kind: 'instance SIGKILL', signal: 'SIGKILL' },
  { kind: 'database restart, immediate shutdown', shutdown: 'immediate' },
  { kind: 'instance SIGTERM', signal: 'SIGTERM' },
];
/** With a read replica (issue 17), it is crashed too, between the rounds of the others. */
const REPLICA_FAULT: Fault = { kind: 'read replica crash (immediate shutdown)', replica: 'stop' };

/** The read replica, for the topology that has one. */
export interface SoakReplica {
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
}

/** How long PostgreSQL stays down: long enough that every instance notices and answers 503 for a while. */
const DATABASE_DOWN_MS = 5000;
/** Beyond this without every instance answering, the service has not recovered on its own. */
const RECOVERY_LIMIT_MS = 120_000;

export interface FaultRecord {
  readonly number: number;
  readonly kind: string;
  /** `PostgreSQL` or `instance N`. */
  readonly target: string;
  readonly atSeconds: number;
  /** What happened to the target: how long the shutdown took, or how the instance ended. */
  readonly detail: string;
  /** From the fault until the database accepted connections again, or the new instance was UP. */
  readonly downSeconds: number;
  /** From the fault until every instance was UP and answered a read; null when that never happened. */
  readonly recoverySeconds: number | null;
  /** Failed requests from the fault until recovery. */
  readonly errorsDuring: ErrorCounts;
  /** Why injecting the fault itself failed. */
  readonly failure?: string;
}

export interface FaultSchedule {
  readonly records: readonly FaultRecord[];
  /** The fault in progress, or the last one and how it ended, in a few words. */
  latest(): string;
  /** Waits for the fault in progress, if any; schedules no further one. */
  finish(): Promise<void>;
}

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/**
 * One fault every interval (the first one interval into the run) until the run's last interval, each followed by
 * waiting until every instance answers again. A fault is logged when it starts and when it has recovered.
 */
export function scheduleFaults(options: {
  database: SoakDatabase;
  cluster: SoakCluster;
  tally: SoakTally;
  startedAt: number;
  intervalSeconds: number;
  durationSeconds: number;
  log: (line: string) => void;
  replica?: SoakReplica;
}): FaultSchedule {
  const { database, cluster, tally, startedAt, replica } = options;
  const rotation = replica ? [...ROTATION, REPLICA_FAULT] : ROTATION;
  const records: FaultRecord[] = [];
  let stopped = false;
  let instanceFaults = 0;
  let inProgress: string | undefined;

  const inject = async (number: number): Promise<FaultRecord> => {
    const fault = rotation[(number - 1) % rotation.length]!;
    const { kind } = fault;
    const errorsBefore = { ...tally.errors };
    const started = Date.now();
    const atSeconds = seconds(started - startedAt);
    const instance = 'signal' in fault ? instanceFaults++ % cluster.size : undefined;
    const target = instance !== undefined ? `instance ${instance + 1}` : 'replica' in fault ? 'replica' : 'PostgreSQL';
    inProgress = `#${number} ${kind} (${target}) at ${clock(atSeconds)}, in progress`;
    options.log(`fault #${number}: ${kind} (${target})`);
    let detail = '';
    let downSeconds = 0;
    let recoverySeconds: number | null = null;
    let failure: string | undefined;
    try {
      if ('shutdown' in fault) {
        await database.stop(fault.shutdown);
        const stoppedAfter = Date.now() - started;
        await sleep(DATABASE_DOWN_MS);
        const startedAgain = Date.now();
        await database.start();
        detail = `stopped in ${seconds(stoppedAfter)} s, down ${seconds(DATABASE_DOWN_MS)} s, started in ${seconds(Date.now() - startedAgain)} s`;
      } else if ('replica' in fault) {
        await replica!.stopReplica();
        await sleep(DATABASE_DOWN_MS);
        const startedAgain = Date.now();
        await replica!.startReplica();
        detail = `down ${seconds(DATABASE_DOWN_MS)} s, streaming again ${seconds(Date.now() - startedAgain)} s after its start`;
      } else {
        const exit = await cluster.replace(instance!, fault.signal);
        detail = `${describeExit(exit)}; a new instance on the same port`;
      }
      downSeconds = seconds(Date.now() - started);
      const waited = await waitUntilAllAnswer(cluster, RECOVERY_LIMIT_MS);
      if (waited !== undefined) recoverySeconds = seconds(Date.now() - started);
    } catch (error) {
      failure = (error as Error).message;
    }
    const errorsDuring = Object.fromEntries(
      ERROR_CLASSES.map((name) => [name, tally.errors[name] - errorsBefore[name]]),
    ) as ErrorCounts;
    const outcome = failure
      ? `FAILED: ${failure}`
      : recoverySeconds === null
        ? `NOT RECOVERED within ${RECOVERY_LIMIT_MS / 1000} s`
        : `recovered after ${recoverySeconds} s`;
    options.log(`fault #${number} ${kind}: ${detail}; ${outcome}; errors meanwhile: ${nonZero(errorsDuring)}`);
    inProgress = undefined;
    return { number, kind, target, atSeconds, detail, downSeconds, recoverySeconds, errorsDuring, failure };
  };

  const run = (async () => {
    for (let number = 1; number * options.intervalSeconds < options.durationSeconds; number++) {
      const due = startedAt + number * options.intervalSeconds * 1000;
      while (!stopped && Date.now() < due) await sleep(Math.min(250, due - Date.now()));
      if (stopped) return;
      records.push(await inject(number));
    }
  })();

  return {
    records,
    latest: () => {
      if (inProgress) return inProgress;
      const last = records.at(-1);
      if (!last) return 'none yet';
      const outcome = last.recoverySeconds === null ? 'not recovered' : `recovered after ${last.recoverySeconds} s`;
      return `#${last.number} ${last.kind} (${last.target}) at ${clock(last.atSeconds)}, ${outcome}`;
    },
    finish: async () => {
      stopped = true;
      await run;
    },
  };
}
