import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startRoundRobinProxy, type RoundRobinProxy } from '../test/support/round-robin-proxy.js';
import { startServicesOnDatabase, stopServices } from '../test/support/service-cluster.js';
import {
  startService,
  waitForExit,
  waitUntilUp,
  type Exit,
  type ServiceProcess,
} from '../test/support/service-process.js';
import { TEST_SECRET } from '../test/support/tokens.js';
import { sleep } from '../test/reliability/harness.js';

const GRACEFUL_EXIT_LIMIT_MS = 20_000;
const START_LIMIT_MS = 60_000;
const PROBE_LIMIT_MS = 2000;

export interface InstanceLog {
  readonly instance: number;
  readonly generation: number;
  readonly file: string;
  /** Error-level log lines (level ≥ 50) by message: what the 5xx answers were about. */
  readonly errorsByMessage: Record<string, number>;
}

/** A log line's message without what differs per request: access-log lines by status, others with their cause. */
function summaryOf(entry: Record<string, unknown>): string {
  const status = (entry.res as { statusCode?: number } | undefined)?.statusCode;
  if (status !== undefined) return `access log of a ${status} answer`;
  const message = String(entry.msg);
  // Ports differ per run and per instance; without them the same cause is counted as one.
  const cause = (entry.err as { message?: string } | undefined)?.message?.replace(/(\d+\.\d+\.\d+\.\d+):\d+/g, '$1');
  return cause && !message.includes(cause) ? `${message} (${cause})` : message;
}

export interface SoakCluster {
  /** Where the load goes: the round-robin proxy in front of every instance. */
  readonly url: string;
  readonly size: number;
  /** Each instance's own address, without the proxy: the one running now in each slot. */
  instanceUrls(): string[];
  /** Ends instance `index` with the signal and starts a new one on the same port; answers how the old one ended. */
  replace(index: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<Exit>;
  /** Whether every instance is UP on /actuator/health and answers an authenticated read with 200. */
  allAnswer(): Promise<boolean>;
  /**
   * Issue 37: `db_reads_total` by pool, summed over the instances running now (a replaced instance's count is
   * gone with it): how many reads the replicas served.
   */
  readsByPool(): Promise<Record<string, number>>;
  /** Stops the proxy and every instance (SIGTERM); answers how each ended. */
  stop(): Promise<Exit[]>;
  /** SIGKILL for every instance still running, when the runner itself is exiting. */
  killAtExit(): void;
  /** Writes each process's output to the folder and summarises its error lines. */
  writeLogs(directory: string): Promise<InstanceLog[]>;
}

/**
 * Instances of the built service on one database, started together (their migrations race under the advisory
 * lock), behind a round-robin proxy that keeps routing to a slot while its instance is being replaced.
 */
export async function startSoakCluster(options: {
  databaseUrl: string;
  instances: number;
  authorization: string;
  /** An authenticated GET that answers 200 when an instance can reach the database. */
  probePath: string;
  /** More settings of every instance (a pooler's DATABASE_POOL_MODE and DATABASE_DIRECT_URL). */
  environment?: Record<string, string>;
}): Promise<SoakCluster> {
  const settings = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: options.databaseUrl,
    AUTH_JWT_SECRET: TEST_SECRET,
    ...options.environment,
  };
  const current = await startServicesOnDatabase(options.databaseUrl, options.instances, settings);
  const generations: ServiceProcess[][] = current.map((service) => [service]);
  const proxy: RoundRobinProxy = await startRoundRobinProxy(current.map((service) => service.port));

  const answers = async (service: ServiceProcess): Promise<boolean> => {
    try {
      const health = await fetch(`${service.baseUrl}/actuator/health`, { signal: AbortSignal.timeout(PROBE_LIMIT_MS) });
      if (health.status !== 200 || ((await health.json()) as { status?: string }).status !== 'UP') return false;
      const read = await fetch(`${service.baseUrl}${options.probePath}`, {
        headers: { authorization: options.authorization },
        signal: AbortSignal.timeout(PROBE_LIMIT_MS),
      });
      await read.arrayBuffer();
      return read.status === 200;
    } catch {
      return false;
    }
  };

  return {
    url: proxy.url,
    size: current.length,
    instanceUrls: () => current.map((service) => service.baseUrl),
    async replace(index, signal) {
      const old = current[index]!;
      old.child.kill(signal);
      let exit: Exit;
      try {
        exit = await waitForExit(old, signal === 'SIGKILL' ? START_LIMIT_MS : GRACEFUL_EXIT_LIMIT_MS);
      } catch {
        old.child.kill('SIGKILL');
        exit = await old.exited;
      }
      const fresh = startService(settings, old.port);
      current[index] = fresh;
      generations[index]!.push(fresh);
      await waitUntilUp(fresh, START_LIMIT_MS);
      return exit;
    },
    async allAnswer() {
      return (await Promise.all(current.map(answers))).every(Boolean);
    },
    async readsByPool() {
      const reads: Record<string, number> = {};
      for (const service of current) {
        const response = await fetch(`${service.baseUrl}/actuator/prometheus`, {
          headers: { authorization: options.authorization },
          signal: AbortSignal.timeout(PROBE_LIMIT_MS * 5),
        });
        for (const match of (await response.text()).matchAll(/^db_reads_total\{pool="(\w+)"\} (\d+)$/gm)) {
          reads[match[1]!] = (reads[match[1]!] ?? 0) + Number(match[2]);
        }
      }
      return reads;
    },
    async stop() {
      await proxy.close();
      await stopServices(current);
      return Promise.all(current.map((service) => service.exited));
    },
    killAtExit() {
      for (const service of current) {
        if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
      }
    },
    async writeLogs(directory) {
      const logs: InstanceLog[] = [];
      for (const [instance, processes] of generations.entries()) {
        for (const [generation, service] of processes.entries()) {
          const file = path.join(directory, `instance-${instance + 1}-start-${generation + 1}.log`);
          await writeFile(file, service.stdout() + service.stderr());
          const errorsByMessage: Record<string, number> = {};
          for (const entry of service.logEntries()) {
            if (Number(entry.level) < 50) continue;
            const message = summaryOf(entry);
            errorsByMessage[message] = (errorsByMessage[message] ?? 0) + 1;
          }
          logs.push({ instance: instance + 1, generation: generation + 1, file, errorsByMessage });
        }
      }
      return logs;
    },
  };
}

/** Polls until every instance answers; answers the milliseconds it took, or undefined when it never did. */
export async function waitUntilAllAnswer(cluster: SoakCluster, limitMs: number): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (await cluster.allAnswer()) return Date.now() - started;
    await sleep(200);
  }
  return undefined;
}
