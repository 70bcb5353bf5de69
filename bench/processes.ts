import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isRunning } from '../test/support/service-process.js';

export interface TrackedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code (null when ended by a signal) once the process has gone. */
  readonly exited: Promise<number | null>;
}

interface Cleanup {
  readonly name: string;
  readonly run: () => Promise<void>;
  /** What can still be done synchronously when the runner itself is exiting (no event loop left). */
  readonly emergency?: () => void;
}

const running = new Set<TrackedProcess>();
const cleanups: Cleanup[] = [];
const stoppingHooks: (() => void)[] = [];
let cleaningUp: Promise<void> | undefined;

export function spawnTracked(
  name: string,
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdio: StdioOptions; cwd?: string },
): TrackedProcess {
  if (cleaningUp) throw new Error(`not starting ${name}: the benchmark is stopping`);
  // A process group of its own: a Ctrl+C in the terminal reaches only the runner, which stops everything in order.
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid === undefined) throw new Error(`${name} did not start (${command})`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tracked: TrackedProcess = { name, child, pid: child.pid, exited };
  running.add(tracked);
  void exited.then(() => running.delete(tracked));
  return tracked;
}

/** SIGTERM (the service shuts down gracefully and writes its CPU profile), then SIGKILL after the grace time. */
export async function stopProcess(tracked: TrackedProcess, graceMs = 15_000): Promise<void> {
  if (!isRunning(tracked.pid) || tracked.child.exitCode !== null) return;
  tracked.child.kill('SIGTERM');
  const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
  if ((await Promise.race([tracked.exited, timer])) === 'late') {
    console.error(`${tracked.name} did not stop within ${graceMs} ms: killing it`);
    tracked.child.kill('SIGKILL');
    await tracked.exited;
  }
}

/** Registers work for the end of the run (last registered runs first), also on failure and Ctrl+C. */
export function onCleanup(name: string, run: () => Promise<void>, emergency?: () => void): void {
  cleanups.push({ name, run, emergency });
}

/** Runs first when the benchmark stops early: e.g. ends the load, so the service can shut down at once. */
export function onStopping(hook: () => void): void {
  stoppingHooks.push(hook);
}

/** Stops every tracked process, then runs the cleanups in reverse order. Safe to call more than once. */
export function cleanupAll(): Promise<void> {
  cleaningUp ??= (async () => {
    for (const hook of stoppingHooks) hook();
    await Promise.all([...running].map((tracked) => stopProcess(tracked).catch(() => undefined)));
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup.run();
      } catch (error) {
        console.error(`cleanup '${cleanup.name}' failed: ${(error as Error).message}`);
      }
    }
  })();
  return cleaningUp;
}

/** Runs a runner's main to the end: its exit code after every cleanup, or 1 after saying what failed. */
export function runToExit(main: () => Promise<number>, what: string): void {
  main()
    .then(async (code) => {
      await cleanupAll();
      process.exit(code);
    })
    .catch(async (error: unknown) => {
      console.error(`${what} failed:`, error instanceof Error ? (error.stack ?? error.message) : error);
      await cleanupAll();
      process.exit(1);
    });
}

/** Ctrl+C, SIGTERM and crashes end the run through cleanupAll; a bare exit still kills what is left. */
export function installCleanupHandlers(): void {
  let firstSignalAt = 0;
  const interrupt = (signal: NodeJS.Signals): void => {
    if (cleaningUp) {
      // A Ctrl+C reaches the runner twice (from the terminal and relayed by tsx); only a later one means "now".
      if (Date.now() - firstSignalAt < 2000) return;
      console.error(`\n${signal} again: killing what is left`);
      process.exit(130);
    }
    firstSignalAt = Date.now();
    console.error(`\n${signal}: stopping every process the benchmark started…`);
    void cleanupAll().finally(() => process.exit(130));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  process.on('SIGHUP', interrupt);
  process.on('unhandledRejection', (error) => {
    console.error('unexpected failure:', error);
    void cleanupAll().finally(() => process.exit(1));
  });
  process.on('exit', () => {
    for (const tracked of running) {
      if (isRunning(tracked.pid)) tracked.child.kill('SIGKILL');
    }
    for (const cleanup of cleanups) cleanup.emergency?.();
  });
}

/** Polls the URL until it answers 200; fails early when the process exits. */
export async function waitForHttp(url: string, tracked: TrackedProcess, timeoutMs = 60_000): Promise<void> {
  let exitCode: number | null | undefined;
  void tracked.exited.then((code) => (exitCode = code));
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (exitCode !== undefined) throw new Error(`${tracked.name} exited with code ${exitCode} before it was ready`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${tracked.name} was not ready at ${url} within ${timeoutMs} ms`);
}

/** Resident set size of a process in MiB, from /proc (Linux). */
export function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export interface RssSampling {
  /** Ends the sampling and answers the peak in MiB. */
  stop(): number;
}

/** Samples the RSS every interval; the peak is what a scenario reports. */
export function sampleRss(pid: number, intervalMs = 100): RssSampling {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, intervalMs);
  return {
    stop(): number {
      clearInterval(timer);
      return Math.max(peak, rssMb(pid));
    },
  };
}
