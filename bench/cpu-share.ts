import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** CPU used during a window, in percent of ONE core (200 % = both cores of this machine). */
export interface CpuShare {
  /** The process measured (service or ceiling app). */
  readonly target: number;
  /** PostgreSQL processes started by the benchmark (the embedded server; a BENCH_DATABASE_URL server is "other"). */
  readonly postgres: number;
  /** The runner itself: autocannon, the HTTP clients, the RSS sampling. */
  readonly loadGenerator: number;
  /** Everything not started by the benchmark: other people's work, which the numbers then do not get. */
  readonly other: number;
  readonly cores: number;
}

interface ProcessTimes {
  readonly parent: number;
  readonly command: string;
  readonly ticks: number;
  readonly reapedTicks: number;
}

const TICKS_PER_SECOND = 100;

function processTimes(): Map<number, ProcessTimes> {
  const times = new Map<number, ProcessTimes>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // After the command name: state, ppid, …, utime, stime, cutime, cstime (12th to 15th). The reaped
      // children's time (cutime, cstime) keeps the CPU of processes that ended during the window.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
      times.set(Number(entry), {
        parent: Number(fields[1]),
        command,
        ticks,
        reapedTicks: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // The process ended while the list was read.
    }
  }
  return times;
}

function descendantsOf(root: number, times: ReadonlyMap<number, ProcessTimes>): Set<number> {
  const children = new Map<number, number[]>();
  for (const [pid, { parent }] of times) children.set(parent, [...(children.get(parent) ?? []), pid]);
  const found = new Set<number>([root]);
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (found.has(child)) continue;
      found.add(child);
      queue.push(child);
    }
  }
  return found;
}

/** The runner's reaped children's time (cutime + cstime), which is not the runner's own work. */
function ownChildren(times: ReadonlyMap<number, ProcessTimes>): number {
  return times.get(process.pid)?.reapedTicks ?? 0;
}

function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

export interface CpuWatch {
  stop(): CpuShare | undefined;
}

/** Measures over a window where the machine's CPU went (Linux /proc; elsewhere nothing). */
export function watchCpu(targetPid?: number): CpuWatch {
  if (os.platform() !== 'linux') return { stop: () => undefined };
  const started = performance.now();
  const startMachine = machineTicks();
  const startProcesses = processTimes();
  return {
    stop(): CpuShare {
      const seconds = (performance.now() - started) / 1000;
      const endMachine = machineTicks();
      const endProcesses = processTimes();
      const cores = os.availableParallelism();
      const percent = (ticks: number): number => (ticks / TICKS_PER_SECOND / seconds) * 100;
      // A process that ended hands its time to its parent's cutime: its own delta is then negative by what it
      // had used before the window, so the signed sum over both lists is exactly the time used in the window.
      const used = (pid: number): number => (endProcesses.get(pid)?.ticks ?? 0) - (startProcesses.get(pid)?.ticks ?? 0);
      const everyone = new Map([...startProcesses, ...endProcesses]);
      const target = targetPid === undefined ? new Set<number>() : descendantsOf(targetPid, everyone);
      let targetTicks = 0;
      let postgresTicks = 0;
      let benchTicks = 0;
      for (const pid of descendantsOf(process.pid, everyone)) {
        const ticks = used(pid);
        benchTicks += ticks;
        if (target.has(pid)) targetTicks += ticks;
        else if (everyone.get(pid)?.command === 'postgres') postgresTicks += ticks;
      }
      const runnerOwn = used(process.pid) - (ownChildren(endProcesses) - ownChildren(startProcesses));
      // /proc/stat counts all cores in the same ticks; its share of the window is scaled to one core.
      const machineBusy =
        ((endMachine.busy - startMachine.busy) / Math.max(1, endMachine.total - startMachine.total)) * cores * 100;
      return {
        target: percent(Math.max(0, targetTicks)),
        postgres: percent(Math.max(0, postgresTicks)),
        loadGenerator: percent(Math.max(0, runnerOwn)),
        other: Math.max(0, machineBusy - percent(benchTicks)),
        cores,
      };
    },
  };
}

/** CPU of every process named `command` (e.g. RabbitMQ's `beam.smp`) over a window, in percent of one core. */
export function watchCommandCpu(command: string): { stop(): number | undefined } {
  if (os.platform() !== 'linux') return { stop: () => undefined };
  const ticksOf = (): number =>
    [...processTimes().values()].filter((p) => p.command === command).reduce((sum, p) => sum + p.ticks, 0);
  const started = performance.now();
  const startTicks = ticksOf();
  return {
    stop(): number | undefined {
      const seconds = (performance.now() - started) / 1000;
      const ticks = ticksOf() - startTicks;
      return startTicks === 0 && ticks === 0 ? undefined : (Math.max(0, ticks) / TICKS_PER_SECOND / seconds) * 100;
    },
  };
}
