import { sleep } from '../test/reliability/harness.js';
import { waitUntilAllAnswer, type SoakCluster } from './cluster.js';
import type { SoakTopology } from './config.js';
import type { FailoverSoakDatabase, ReplicasSoakDatabase, RestartableDatabase, ShutdownMode } from './database.js';
import { clock, describeExit, nonZero } from './format.js';
import { ERROR_CLASSES, type ErrorCounts, type SoakTally } from './tally.js';

/** Database and instance faults take turns; each kind comes in its harsh and its gentle form. */
type Fault =
  | { readonly kind: string; readonly shutdown: ShutdownMode }
  | { readonly kind: string; readonly signal: 'SIGKILL' | 'SIGTERM' }
  | { readonly kind: string; readonly replica: 'stop' }
  | { readonly kind: string; readonly replica: 'failover' }
  | { readonly kind: string; readonly replica: 'pause' };
const ROTATION: readonly Fault[] = [
  { kind: 'database restart, fast shutdown', shutdown: 'fast' },
  { kind: 'instance SIGKILL', signal: 'SIGKILL' },
  { kind: 'database restart, immediate shutdown', shutdown: 'immediate' },
  { kind: 'instance SIGTERM', signal: 'SIGTERM' },
];
/** With a read replica (issue 17), it is crashed too, between the rounds of the others. */
const REPLICA_FAULT: Fault = { kind: 'read replica crash (immediate shutdown)', replica: 'stop' };

/**
 * Issue 37 (D41): the failover topology's primary killed and its synchronous replica promoted, and one of several
 * replicas behind a balancer paused, each taking turns with an instance SIGKILL.
 */
const FAILOVER_ROTATION: readonly Fault[] = [
  { kind: 'primary SIGKILL, replica promoted, address moved', replica: 'failover' },
  { kind: 'instance SIGKILL', signal: 'SIGKILL' },
];
const REPLICAS_ROTATION: readonly Fault[] = [
  { kind: 'one replica behind the balancer paused', replica: 'pause' },
  { kind: 'instance SIGKILL', signal: 'SIGKILL' },
];

/** The read replica, for the topology that has one. */
export interface SoakReplica {
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
}

/** How long PostgreSQL stays down: long enough that every instance notices and answers 503 for a while. */
const DATABASE_DOWN_MS = 5000;
/** Longer than DATABASE_READ_MAX_LAG_MS (5 s): the paused replica's connections must be left out for a while. */
const REPLICA_PAUSE_MS = 20_000;
/** How long after the move the soak waits for the first acknowledged write before calling it missing. */
const FIRST_WRITE_LIMIT_MS = 60_000;
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
  /** A failover's timings (issue 37): ms from the primary's SIGKILL; null when no write was acknowledged. */
  readonly failover?: {
    readonly movedAfterMs: number;
    readonly firstWriteAfterKillMs: number | null;
    readonly newStandbySeconds: number;
  };
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

/** When the first write acknowledged at or after `since` arrived, searching from index `from`. */
async function firstWriteAfter(times: readonly number[], from: number, since: number): Promise<number | undefined> {
  for (const deadline = since + FIRST_WRITE_LIMIT_MS; Date.now() < deadline; await sleep(50)) {
    const found = times.slice(from).find((time) => time >= since);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * One fault every interval (the first one interval into the run) until the run's last interval, each followed by
 * waiting until every instance answers again. A fault is logged when it starts and when it has recovered.
 */
export function scheduleFaults(options: {
  topology: SoakTopology;
  /** What the topology's faults act on besides the instances. */
  database?: RestartableDatabase;
  replica?: SoakReplica;
  failover?: FailoverSoakDatabase;
  replicas?: ReplicasSoakDatabase;
  cluster: SoakCluster;
  tally: SoakTally;
  startedAt: number;
  intervalSeconds: number;
  durationSeconds: number;
  log: (line: string) => void;
}): FaultSchedule {
  const { database, cluster, tally, startedAt, replica } = options;
  const rotation =
    options.topology === 'failover'
      ? FAILOVER_ROTATION
      : options.topology === 'replicas'
        ? REPLICAS_ROTATION
        : replica
          ? [...ROTATION, REPLICA_FAULT]
          : ROTATION;
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
    const target =
      instance !== undefined
        ? `instance ${instance + 1}`
        : 'replica' in fault && fault.replica !== 'failover'
          ? 'replica'
          : 'PostgreSQL';
    inProgress = `#${number} ${kind} (${target}) at ${clock(atSeconds)}, in progress`;
    options.log(`fault #${number}: ${kind} (${target})`);
    let detail = '';
    let downSeconds = 0;
    let recoverySeconds: number | null = null;
    let failure: string | undefined;
    let failover: FaultRecord['failover'];
    try {
      if ('shutdown' in fault) {
        await database!.stop(fault.shutdown);
        const stoppedAfter = Date.now() - started;
        await sleep(DATABASE_DOWN_MS);
        const startedAgain = Date.now();
        await database!.start();
        detail = `stopped in ${seconds(stoppedAfter)} s, down ${seconds(DATABASE_DOWN_MS)} s, started in ${seconds(Date.now() - startedAgain)} s`;
      } else if ('replica' in fault && fault.replica === 'failover') {
        const writesBefore = tally.writesAcknowledgedAt.length;
        const times = await options.failover!.failover(DATABASE_DOWN_MS);
        const firstWrite = await firstWriteAfter(tally.writesAcknowledgedAt, writesBefore, times.movedAt);
        failover = {
          movedAfterMs: times.movedAt - times.killedAt,
          firstWriteAfterKillMs: firstWrite === undefined ? null : firstWrite - times.killedAt,
          newStandbySeconds: seconds(times.standbyMs),
        };
        const write =
          firstWrite === undefined
            ? `no write acknowledged within ${FIRST_WRITE_LIMIT_MS / 1000} s of the move`
            : `first write acknowledged ${firstWrite - times.killedAt} ms after the kill (${firstWrite - times.movedAt} after the move)`;
        detail =
          `address moved ${seconds(times.movedAt - times.killedAt)} s after the kill; ${write}; ` +
          `next synchronous standby streaming after ${seconds(times.standbyMs)} s`;
      } else if ('replica' in fault && fault.replica === 'pause') {
        await options.replicas!.pauseReplica(REPLICA_PAUSE_MS);
        detail = `replay paused ${seconds(REPLICA_PAUSE_MS)} s on 1 of ${options.replicas!.replicas} replicas, then resumed`;
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
    return { number, kind, target, atSeconds, detail, downSeconds, recoverySeconds, errorsDuring, failover, failure };
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
