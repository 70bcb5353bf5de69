import { watchCpu, type CpuShare } from './cpu-share.js';
import { spawnTracked } from './processes.js';
import { startProgress, step } from './progress.js';

export interface PgbenchResult {
  readonly tps: number;
  readonly latencyAverageMs: number;
  readonly transactions: number;
  readonly failed: number;
  readonly initSeconds: number;
  readonly scale: number;
  /** The pgbench client counts as the measured process. */
  readonly cpu: CpuShare | undefined;
}

/** libpq's connection settings from a URL (pgbench 15 takes them as options and PGPASSWORD). */
function connectionArgs(url: string): { args: string[]; env: NodeJS.ProcessEnv; database: string } {
  const parsed = new URL(url);
  return {
    args: ['-h', parsed.hostname, '-p', parsed.port || '5432', '-U', decodeURIComponent(parsed.username || 'postgres')],
    env: { ...process.env, PGPASSWORD: decodeURIComponent(parsed.password) },
    database: decodeURIComponent(parsed.pathname.slice(1)),
  };
}

function run(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onStderrLine?: (line: string) => void,
  onStart?: (pid: number) => void,
): Promise<string> {
  const tracked = spawnTracked(name, 'pgbench', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  onStart?.(tracked.pid);
  let out = '';
  let err = '';
  tracked.child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  tracked.child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    err += text;
    for (const line of text.split('\n')) if (line.trim()) onStderrLine?.(line);
  });
  return tracked.exited.then((code) => {
    if (code !== 0) throw new Error(`${name} failed with code ${code}: ${err.slice(-2000)}`);
    return out;
  });
}

export interface PgbenchDatabase {
  readonly url: string;
  readonly scale: number;
  readonly initSeconds: number;
}

/** pgbench -i: the TPC-B-like tables at the scale, in their own database (seeding, outside any timed part). */
export async function initPgbench(url: string, scale: number): Promise<PgbenchDatabase> {
  const { args, env, database } = connectionArgs(url);
  step(`pgbench -i -s ${scale} (TPC-B-like tables, ${(scale * 100_000).toLocaleString('en-US')} accounts)…`);
  const started = performance.now();
  await run('pgbench -i', [...args, '-i', '-q', '-s', String(scale), database], env);
  return { url, scale, initSeconds: (performance.now() - started) / 1000 };
}

/** pgbench's built-in TPC-B-like script with -c/-j/-T on an initialised database. */
export async function runPgbench(options: {
  database: PgbenchDatabase;
  clients: number;
  threads: number;
  seconds: number;
}): Promise<PgbenchResult> {
  const { args, env, database } = connectionArgs(options.database.url);

  const progress = startProgress('pgbench TPC-B-like', options.seconds);
  let cpuWatch = watchCpu();
  let cpu: CpuShare | undefined;
  const output = await run(
    'pgbench',
    [
      ...args,
      '-c',
      String(options.clients),
      '-j',
      String(options.threads),
      '-T',
      String(options.seconds),
      '-P',
      '1',
      database,
    ],
    env,
    (line) => {
      const match = /^progress: ([\d.]+) s, ([\d.]+) tps/.exec(line);
      if (!match) return;
      progress.update(Number(match[1]), `${Math.round(Number(match[2]))} tps`);
      // Read while pgbench and its backends still live: an ended process's time is hard to attribute.
      if (Number(match[1]) >= options.seconds - 1) cpu ??= cpuWatch.stop();
    },
    (pid) => (cpuWatch = watchCpu(pid)),
  );
  cpu ??= cpuWatch.stop();
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1] ?? NaN);
  progress.finish(`${Math.round(tps)} tps`);
  if (!Number.isFinite(tps)) throw new Error(`pgbench printed no TPS:\n${output}`);
  return {
    tps,
    latencyAverageMs: Number(/latency average = ([\d.]+) ms/.exec(output)?.[1] ?? NaN),
    transactions: Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? NaN),
    failed: Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0),
    initSeconds: options.database.initSeconds,
    scale: options.database.scale,
    cpu,
  };
}
