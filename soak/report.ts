import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import * as prettier from 'prettier';
import type { MachineInfo } from '../bench/machine.js';
import type { CheckResult } from './checks.js';
import type { SoakTopology } from './config.js';
import type { FaultRecord } from './faults.js';
import { clock, count, nonZero } from './format.js';
import { ERROR_CLASSES, FAULT_EFFECTS, type ErrorCounts, type Sample } from './tally.js';
import { HANG_SECONDS, type TrafficResult } from './traffic.js';
import type { ReadYourWritesTally } from './read-your-writes.js';

export interface SoakReport {
  readonly startedAt: string;
  readonly minutes: number;
  readonly connections: number;
  readonly faultIntervalSeconds: number;
  readonly instances: number;
  /** Whether the instances reached PostgreSQL directly or through PgBouncer (issue 17). */
  readonly topology: SoakTopology;
  readonly machine: MachineInfo;
  readonly loadAverageAtEnd: number;
  readonly traffic: TrafficResult & { readonly answered: number };
  readonly statusesByKind: Record<string, Record<string, number>>;
  readonly errors: ErrorCounts;
  /** Errors while no fault was being injected or recovered from. */
  readonly errorsOutsideFaults: ErrorCounts;
  readonly connectionErrorCodes: Record<string, number>;
  readonly faults: readonly FaultRecord[];
  readonly checks: readonly CheckResult[];
  /** How each instance ended when the run stopped them (SIGTERM). */
  readonly finalExits: readonly string[];
  /** Error-level lines of every instance's log, by message. */
  readonly serviceErrorLines: Record<string, number>;
  readonly unexpectedAnswers: readonly Sample[];
  /** The `replicas` topology: connections the balancer handed to each replica. */
  readonly replicaConnections?: readonly number[];
  /** The `replicas` topology: db_reads_total by pool of the instances running at the end. */
  readonly readsByPool?: Record<string, number>;
  /** Issue 37: the write-then-read probe beside the load. */
  readonly readYourWrites: ReadYourWritesTally;
  /** Why the run failed; empty when it passed. */
  readonly failures: readonly string[];
}

const START_MARKER = '<!-- soak:start -->';
const END_MARKER = '<!-- soak:end -->';

const WHY: Record<(typeof ERROR_CLASSES)[number], string> = {
  'server declined (503)': 'expected while PostgreSQL is down or starting: the service declines at once',
  'connection refused (proxy 502)': 'expected while an instance is down: the proxy cannot connect to it',
  'connection lost (proxy 502)':
    'expected when an instance dies with requests in flight; else the proxy reused a keep-alive connection the ' +
    'instance was closing',
  'connection error': 'expected when an instance dies with an answer half sent to the proxy',
  timeout: `a bug: no answer within ${HANG_SECONDS} s`,
  'internal error (500)': 'a bug',
  'other 5xx': 'a bug',
  'unexpected 4xx': 'a bug: a request the workload builds correctly was refused',
  'unexpected status': 'a bug',
};

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function answersTable(report: SoakReport): string {
  const rows = Object.entries(report.statusesByKind).map(([kind, statuses]) => {
    const total = Object.values(statuses).reduce((sum, n) => sum + n, 0);
    return [kind, count(total), nonZero(statuses)];
  });
  return table(['request', 'answers', 'statuses'], rows);
}

function errorsTable(report: SoakReport): string {
  const rows = ERROR_CLASSES.map((name) => {
    const codes =
      name === 'connection error' && report.errors[name] > 0 ? ` (${nonZero(report.connectionErrorCodes)})` : '';
    return [name, count(report.errors[name]) + codes, count(report.errorsOutsideFaults[name]), WHY[name]];
  });
  return table(['error', 'count', 'outside fault windows', 'meaning'], rows);
}

function faultsTable(report: SoakReport): string {
  const rows = report.faults.map((fault) => [
    String(fault.number),
    clock(fault.atSeconds),
    fault.kind,
    fault.target,
    fault.failure ? `FAILED: ${fault.failure}` : fault.detail,
    `${fault.downSeconds} s`,
    fault.recoverySeconds === null ? 'NOT RECOVERED' : `${fault.recoverySeconds} s`,
    nonZero(fault.errorsDuring),
  ]);
  return table(
    ['#', 'at', 'fault', 'target', 'what happened', 'down', 'all answering after', 'errors meanwhile'],
    rows,
  );
}

function faultCounts(report: SoakReport): string {
  const byKind = new Map<string, number>();
  for (const fault of report.faults) byKind.set(fault.kind, (byKind.get(fault.kind) ?? 0) + 1);
  return [...byKind].map(([kind, n]) => `${kind} ×${n}`).join(', ');
}

/** The generated part of RELIABILITY.md: the latest full soak run. */
export function soakSection(report: SoakReport): string {
  const { machine, traffic } = report;
  const verdict =
    report.failures.length === 0
      ? '**Passed**: no request answered 500 or an unexpected status, nothing acknowledged was lost, every invariant holds.'
      : `**Failed**:\n\n${report.failures.map((failure) => `- ${failure}`).join('\n')}`;
  const logLines = Object.keys(report.serviceErrorLines).length === 0 ? { none: 0 } : report.serviceErrorLines;
  return [
    START_MARKER,
    '## Latest soak run (generated by `npm run soak`)',
    '',
    `${report.startedAt}: ${report.minutes} min of the benchmark's mixed workload (35 % products by SKU, 35 % units by pKey, ` +
      `20 % moves, 10 % allocations) from ${report.connections} connections through a round-robin proxy to ` +
      `${report.instances} instances on one embedded PostgreSQL ${machine.postgres}, with a fault every ` +
      `${report.faultIntervalSeconds} s. Machine: ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}, ` +
      `load average ${machine.loadAverageAtStart.toFixed(1)} at the start (the load generator, the proxy, the ` +
      'instances and PostgreSQL share it).',
    '',
    verdict,
    '',
    `${count(traffic.answered)} answers (${count(traffic.requestsPerSecond)} per second), 2xx latency p50 ` +
      `${traffic.p50Ms} ms, p99 ${traffic.p99Ms} ms, max ${traffic.maxMs} ms. Faults: ${faultCounts(report) || 'none'}.`,
    '',
    '### Answers',
    '',
    answersTable(report),
    '',
    '### Errors by kind',
    '',
    errorsTable(report),
    '',
    '### Faults',
    '',
    faultsTable(report),
    '',
    '### After the load',
    '',
    table(
      ['check', 'result'],
      report.checks.map((check) => [check.check, `${check.passed ? 'holds' : 'BROKEN'}: ${check.summary}`]),
    ),
    '',
    `Instances at the end: ${report.finalExits.join(', ')}. Error-level log lines of all instances: ` +
      `${nonZero(logLines)}.`,
    END_MARKER,
  ].join('\n');
}

/** Replaces the generated section between the markers (or appends it), leaving the hand-written part as it is. */
export async function writeReliabilitySection(file: string, section: string): Promise<void> {
  const text = existsSync(file) ? await readFile(file, 'utf8') : '# Reliability\n';
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  const updated =
    start !== -1 && end > start
      ? `${text.slice(0, start)}${section}${text.slice(end + END_MARKER.length)}`
      : `${text.trimEnd()}\n\n${section}\n`;
  await writeFile(file, updated);
}

/** results.json, formatted as the project's Prettier settings want it (CI checks every JSON file). */
export async function writeResults(file: string, report: SoakReport): Promise<void> {
  const options = (await prettier.resolveConfig(file)) ?? {};
  await writeFile(file, await prettier.format(JSON.stringify(report), { ...options, filepath: file }));
}

/** The end of the run on stdout: the verdict, the faults and the checks. */
export function summaryLines(report: SoakReport): string[] {
  return [
    `soak ${report.failures.length === 0 ? 'PASSED' : 'FAILED'}: ${count(report.traffic.answered)} answers in ` +
      `${report.minutes} min (${report.topology})`,
    `errors: ${nonZero(report.errors)}`,
    ...report.faults.map(
      (fault) =>
        `fault #${fault.number} ${fault.kind} (${fault.target}): ` +
        (fault.recoverySeconds === null ? 'NOT RECOVERED' : `all answering after ${fault.recoverySeconds} s`) +
        ` (${fault.failure ?? fault.detail})`,
    ),
    `read-your-writes probe: ${count(report.readYourWrites.created.length)} created, ` +
      `${count(report.readYourWrites.relabelled)} relabelled; 404 on the writing instance ` +
      `${report.readYourWrites.ownReads404}, on another ${report.readYourWrites.otherReads404}; older label on the ` +
      `writing instance ${report.readYourWrites.ownStale}, on another ${report.readYourWrites.otherStale}`,
    `load average ${report.machine.loadAverageAtStart.toFixed(1)} at the start, ${report.loadAverageAtEnd.toFixed(1)} at the end`,
    ...report.checks.map((check) => `${check.passed ? 'holds ' : 'BROKEN'} ${check.check}: ${check.summary}`),
    ...report.failures.map((failure) => `FAILURE: ${failure}`),
  ];
}

/** Why the run fails: anything but a fault's expected effects, a fault not recovered from, a broken check. */
export function failuresOf(
  errors: ErrorCounts,
  faults: readonly FaultRecord[],
  checks: readonly CheckResult[],
  finalExits: readonly string[],
): string[] {
  const failures: string[] = [];
  for (const name of ERROR_CLASSES) {
    if (!FAULT_EFFECTS.includes(name) && errors[name] > 0) failures.push(`${count(errors[name])} × ${name}`);
  }
  for (const fault of faults) {
    if (fault.failure) failures.push(`fault #${fault.number} (${fault.kind}) could not be injected: ${fault.failure}`);
    else if (fault.recoverySeconds === null) failures.push(`fault #${fault.number} (${fault.kind}): not recovered`);
  }
  for (const check of checks) if (!check.passed) failures.push(`${check.check}: ${check.summary}`);
  for (const [index, exit] of finalExits.entries()) {
    if (exit !== 'exited with code 0') failures.push(`instance ${index + 1} did not stop cleanly: ${exit}`);
  }
  return failures;
}

/**
 * Issue 37 (D41): a resource never disappears, and no instance reads back older data than a write answered before
 * the read (the instances run with the default DATABASE_READ_AFTER=any-write).
 */
export function readYourWritesFailures(tally: ReadYourWritesTally): string[] {
  const failures: string[] = [];
  if (tally.ownReads404 > 0)
    failures.push(`${count(tally.ownReads404)} × 404 reading a Product on the instance that wrote it`);
  if (tally.otherReads404 > 0)
    failures.push(`${count(tally.otherReads404)} × 404 reading a Product on another instance`);
  if (tally.ownStale > 0) failures.push(`${count(tally.ownStale)} × older label read on the instance that wrote it`);
  if (tally.otherStale > 0) failures.push(`${count(tally.otherStale)} × older label read on another instance`);
  const unexpected = Object.entries(tally.statuses).flatMap(([stepName, statuses]) =>
    Object.keys(statuses)
      .map(Number)
      .filter((status) => ![200, 201, 404, 502, 503].includes(status))
      .map((status) => `${count(statuses[status]!)} × ${status} at ${stepName} (read-your-writes probe)`),
  );
  return [...failures, ...unexpected];
}
