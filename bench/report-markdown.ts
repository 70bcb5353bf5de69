import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULTS, OTHER_VARIABLES, VARIABLES } from './config.js';
import type { LoadResult } from './load.js';
import type { RunReport, SeparateScenario } from './report.js';
import { formatNumber, type Measurement, type ScenarioResult } from './results.js';
import type { PruneScenarioDetails } from './scenario-17-prune.js';
import { PROJECT_ROOT } from '../test/support/service-process.js';

const NOTES_MD = path.join(PROJECT_ROOT, 'bench', 'notes.md');

export const num = (value: number | undefined, digits = 0): string =>
  value === undefined || !Number.isFinite(value) ? '–' : formatNumber(value, digits);

export function throughput(m: Measurement | undefined): string {
  return m ? `${num(m.throughput, m.unit === 'MB/s' ? 1 : 0)} ${m.unit}` : '–';
}

export function latency(m: Measurement): string {
  return `${num(m.p50Ms, m.p50Ms !== undefined && m.p50Ms < 10 ? 1 : 0)} / ${num(m.p99Ms, m.p99Ms !== undefined && m.p99Ms < 10 ? 1 : 0)} ms`;
}

function cpuShare(m: Measurement): string {
  const c = m.cpu;
  return c ? `${num(c.target)} / ${num(c.postgres)} / ${num(c.loadGenerator)} / ${num(c.other)} %` : '–';
}

/** CPU time per request (or allocation, product) of the measured process and of PostgreSQL. */
function cpuPerOperation(m: Measurement): string {
  const c = m.cpu;
  if (!c || m.unit === 'MB/s' || m.throughput <= 0) return '–';
  const perOperation = (percent: number): string => num((percent / 100 / m.throughput) * 1000, 3);
  return `${perOperation(c.target)} / ${perOperation(c.postgres)} ms`;
}

function summaryRow(s: ScenarioResult): string {
  const met = s.targets.every((t) => t.met);
  const cells = [
    String(s.id),
    s.title,
    throughput(s.service),
    latency(s.service),
    s.service.peakRssMb === undefined ? '–' : `${num(s.service.peakRssMb)} MB`,
    s.ceiling ? `${throughput(s.ceiling)} (${s.ceiling.label})` : '–',
    s.ratio === undefined ? '–' : `${s.ratio.toFixed(2)} ×`,
    s.targets.map((t) => t.target).join('; '),
    met
      ? '**yes**'
      : `**no** (${s.targets
          .filter((t) => !t.met)
          .map((t) => t.actual)
          .join('; ')})`,
  ];
  return `| ${cells.join(' | ')} |`;
}

/** Scenario 17 (issue 29): the prune's figures and the WAL and space per 1,000,000 rows. */
function pruneTable(s: ScenarioResult): string[] {
  const { prune: p, walAndSpace: w, loadAverage } = s.details as unknown as PruneScenarioDetails;
  const delays = (d: PruneScenarioDetails['prune']['feedDelays']['during']): string =>
    `${num(d.worstMs)} / ${num(d.p99Ms)} / ${num(d.p50Ms)} ms`;
  const mb = (bytesPerRow: number): string => `${num(bytesPerRow)} MB (${num(bytesPerRow)} B a row)`;
  return [
    `| issue 29 | figure (load average ${num(loadAverage.start, 2)} → ${num(loadAverage.end, 2)}) |`,
    '|---|---|',
    `| prune of ${num(p.oldEvents)} old events (parts of ${num(p.partitionSize)}) | ${num(p.pruneSeconds, 1)} s, ${p.partsDropped} parts dropped, ${num(p.removed)} events |`,
    `| writes committed during the prune (${p.writers} writers) | ${num(p.writesDuringPrune)}; before it ended ${num(p.inFeedBeforePruneEnded)} in the feed, ${num(p.atBrokerBeforePruneEnded)} at the consumer |`,
    `| commit-to-feed delay during the prune: worst / p99 / p50 | ${delays(p.feedDelays.during)} |`,
    `| commit-to-feed delay before it (old events kept) / after it: worst / p99 / p50 | ${delays(p.feedDelays.before)} / ${delays(p.feedDelays.after)} |`,
    `| writes lost (outbox, feed, broker) / duplicated / renumbered | ${p.lost.outbox + p.lost.feed + p.lost.broker} / ${p.duplicated + p.brokerDuplicates} / ${p.renumbered} of ${num(p.writes)} |`,
    `| per 1,000,000 events: WAL appended / numbered | ${mb(w.eventAppendedWal)} / ${mb(w.eventNumberedWal)} |`,
    `| per 1,000,000 events: space in their parts | ${mb(w.eventSpace)} |`,
    `| per 1,000,000 ledger rows: WAL / space | ${mb(w.ledgerWal)} / ${mb(w.ledgerSpace)} |`,
    `| WAL and space measured on | ${num(w.rows)} events and ledger rows, scaled linearly; resource ${num(w.resourceBytes)} B of JSON |`,
    '',
  ];
}

/** `provenance`: where the figures come from when not from the report's own run. */
function details(s: ScenarioResult, provenance?: string): string {
  const lines = [`### ${s.id}. ${s.title}`, '', ...(provenance ? [provenance, ''] : [])];
  const measured = [s.service, ...(s.ceiling ? [s.ceiling] : []), ...(s.extra ?? [])];
  lines.push(
    '| measured | throughput | p50 / p99 | peak RSS | CPU: measured process / PostgreSQL / load generator / other processes | CPU ms per operation: process / PostgreSQL |',
    '|---|---|---|---|---|---|',
  );
  for (const m of measured) {
    lines.push(
      `| ${m.label} | ${throughput(m)} | ${latency(m)} | ${m.peakRssMb === undefined ? '–' : `${num(m.peakRssMb)} MB`} | ${cpuShare(m)} | ${cpuPerOperation(m)} |`,
    );
  }
  lines.push('');
  if (s.ratio !== undefined) lines.push(`Ratio to the ceiling (${s.ratioBasis}): **${s.ratio.toFixed(2)} ×**.`, '');
  if (s.id === 17) lines.push(...pruneTable(s));
  for (const t of s.targets) lines.push(`- ${t.met ? '✅' : '❌'} ${t.target}: ${t.actual}`);
  for (const note of s.notes) lines.push(`- ${note}`);
  const loads = s.details as Partial<Record<'service' | 'ceiling', Partial<LoadResult>>>;
  if (loads.service?.statuses) lines.push(`- service statuses: \`${JSON.stringify(loads.service.statuses)}\``);
  for (const who of ['service', 'ceiling'] as const) {
    const waits = loads[who]?.waits;
    if (waits) {
      const states = Object.entries(waits.connectionsByState).map(([state, count]) => `${state} ${count}`);
      lines.push(`- ${who}'s PostgreSQL connections, on average: ${states.join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function previousComparison(previous: RunReport['previous'], current: RunReport): string {
  if (!previous) return '';
  const rows = current.scenarios.flatMap((s) => {
    const before = previous.scenarios.find((p) => p.id === s.id);
    if (!before) return [];
    return [
      `| ${s.id} | ${throughput(before.service)} → ${throughput(s.service)} | ${latency(before.service)} → ${latency(s.service)} | ${before.ratio?.toFixed(2) ?? '–'} → ${s.ratio?.toFixed(2) ?? '–'} | ${cpuPerOperation(before.service)} → ${cpuPerOperation(s.service)} | ${num(before.service.cpu?.other)} → ${num(s.service.cpu?.other)} % |`,
    ];
  });
  return [
    `## Compared with the previous full run (${previous.startedAt})`,
    '',
    '| # | throughput | p50 / p99 | ratio | CPU ms per operation: service / PostgreSQL | other processes’ CPU |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** The events scenarios (issue 12): every target with its figure, met or not, and the relay's pace. */
function eventsTable(report: RunReport): string {
  const rows = report.scenarios
    .filter((s) => s.id === 8 || s.id === 9)
    .flatMap((s) => [
      ...s.targets.map((t) => `| ${s.id} | ${t.target} | ${t.actual} | ${t.met ? '**yes**' : '**no**'} |`),
      ...(s.id === 9 ? [`| 9 | relay events/s (reported) | ${throughput(s.service)} | – |`] : []),
    ]);
  if (rows.length === 0) return '';
  return [
    '### Events (issue 12): targets and figures',
    '',
    '| # | target | figure | met? |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Scenarios added after the full run, each from the run of its own that measured it at the issue's sizes. */
function separateDetails(separate: readonly SeparateScenario[] | undefined): string {
  if (!separate?.length) return '';
  const sections = separate.map(({ startedAt, scenarios, machine, result }) =>
    details(
      result,
      `Measured ${startedAt} in a run of its own (\`BENCH_SCENARIOS=${scenarios.join(',')}\`, the issue's sizes), load average ` +
        `${machine.loadAverageAtStart.toFixed(2)} at the run's start; PostgreSQL ${machine.postgres} (${machine.database}).`,
    ),
  );
  return [
    '## Scenarios measured after the full run',
    '',
    'Added after the full run above and measured at the issue’s sizes in runs of their own; a full run replaces them.',
    '',
    ...sections,
  ].join('\n');
}

/** How much of the machine other people's work took while the service was measured: the numbers' caveat. */
function otherLoad(report: RunReport): string {
  const shares = report.scenarios.flatMap((s) => (s.service.cpu ? [s.service.cpu.other] : []));
  if (shares.length === 0) return '';
  return (
    `While the service was measured, processes the benchmark did not start used ${num(Math.min(...shares))}–` +
    `${num(Math.max(...shares))} % of a core (of ${report.machine.cores * 100} %): req/s and latencies move with ` +
    'that, CPU ms per operation (Details) much less.'
  );
}

/** BENCHMARKS.md: how to run, the machine, the table, the details, the comparison and bench/notes.md. */
export function renderMarkdown(report: RunReport): string {
  const m = report.machine;
  const settings = (Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]).map(
    (key) => `| \`${VARIABLES[key].name}\` | ${DEFAULTS[key].toLocaleString('en-US')} | ${VARIABLES[key].meaning} |`,
  );
  const others = OTHER_VARIABLES.map((v) => `| \`${v.name}\` | ${v.fallback} | ${v.meaning} |`);
  const notes = existsSync(NOTES_MD) ? readFileSync(NOTES_MD, 'utf8').trim() : '';
  const failures = [
    ...report.failures.map((f) => `- scenario ${f.id} failed: ${f.error}`),
    ...(report.skipped ?? []).map((s) => `- **${s.reason}**`),
  ];
  return `# Benchmarks

\`npm run bench\` seeds a real PostgreSQL, starts the service (\`node dist/main.js\`, auth and info logging on) and
a bare Express 5 + pg ceiling app, runs each scenario of issue 6 against both, and writes this file and
\`bench/results.json\`. Scenarios 8 and 9 (issue 12) measure stock events: they start a further instance with
\`AMQP_URL\` set, publishing to an exchange of the run on the RabbitMQ at \`BENCH_AMQP_URL\`, drained by a consumer
in the runner; without a broker they are skipped; scenario 17 (issue 29) starts one on a database of its own and
prunes old events while writers run. The embedded PostgreSQL preloads \`pg_stat_statements\`, from which scenario 4
counts the statements (round trips) and WAL per allocation (on a \`BENCH_DATABASE_URL\` server only if it preloads it
too). A quick smoke run with smaller sizes writes \`bench/results/smoke.{md,json}\` instead; a run of some scenarios at
the default sizes writes there too and records here the scenarios the full run lacks (*Scenarios measured after the
full run*):

\`\`\`bash
npm run bench                                                      # the full run (defaults below)
BENCH_PRODUCTS=10000 BENCH_UNITS=50000 BENCH_BULK_PRODUCTS=10000 BENCH_STREAM_PRODUCTS=50000 \\
  BENCH_DURATION=3 BENCH_MIXED_DURATION=5 BENCH_WARMUP=1 BENCH_PGBENCH_SCALE=4 npm run bench   # smoke run
BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench                   # on a server
\`\`\`

| Variable | Default | Meaning |
|---|---|---|
${[...settings, ...others].join('\n')}

## Machine

- ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}
- Node ${m.node}; PostgreSQL ${m.postgres} (${m.database})
- load average when the run started: ${m.loadAverageAtStart.toFixed(2)}; load generator (autocannon), service,
  ceiling app, PostgreSQL and (scenarios 8, 9, 16, 17) RabbitMQ share the same ${m.cores} cores

## Results (${report.full ? 'full run' : 'smoke run'}, ${report.startedAt}, ${num(report.totalSeconds / 60, 1)} min)

| # | Scenario | Service | p50 / p99 | Peak RSS (service) | Ceiling | Ratio | Target | Met? |
|---|---|---|---|---|---|---|---|---|
${report.scenarios.map(summaryRow).join('\n')}
${failures.length ? `\n${failures.join('\n')}\n` : ''}
${eventsTable(report)}
${otherLoad(report)}

Service log during the run${report.serviceLog.files && report.serviceLog.files.length > 1 ? ` (${report.serviceLog.files.join(', ')})` : ''}: ${report.serviceLog.lines.toLocaleString('en-US')} lines
(${num(report.serviceLog.bytes / 1e6, 1)} MB), ${report.serviceLog.errorLines} at level error or above.

## Details

How to read them: **CPU** is in percent of one core (this machine has ${m.cores}, so ${m.cores * 100} % is all of it), split into
the measured process (service or ceiling app), PostgreSQL, the load generator (the runner: autocannon) and
*other processes* — work on the machine that the benchmark did not start, which the numbers then did not get.
**CPU ms per operation** divides the measured process's and PostgreSQL's CPU by the throughput: it moves much
less with the machine's load than req/s do, so compare runs by it. **PostgreSQL connections** are sampled from
\`pg_stat_activity\` every 50 ms (\`idle in transaction\`: inside a transaction, waiting for the next statement).
With 50 connections in a closed loop the mean latency is 50 ÷ throughput, so a p99 target is also a throughput
target. Profiles: \`BENCH_CPU_PROF=1\` writes the service's and the ceiling app's CPU profiles to
\`bench/results/profiles/\`, summarised by \`npx tsx bench/cpu-profile.ts <dir> [top] [function]\`;
\`BENCH_SERVICE_MAIN\` measures another build of the service (a change tried before it lands in \`src/\`).

${report.scenarios.map((s) => details(s)).join('\n')}
${separateDetails(report.separate)}
${previousComparison(report.previous, report)}${notes ? `\n${notes}\n` : ''}`;
}
