import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchConfig } from './config.js';
import type { MachineInfo } from './machine.js';
import { latency, num, renderMarkdown, throughput } from './report-markdown.js';
import type { Measurement, ScenarioResult } from './results.js';
import { PROJECT_ROOT } from '../test/support/service-process.js';
import { RESULTS_DIR } from './service.js';

export interface RunReport {
  readonly startedAt: string;
  readonly totalSeconds: number;
  readonly full: boolean;
  /** The settings, without the server URL (it may hold a password). */
  readonly config: Omit<BenchConfig, 'databaseUrl'> & { databaseUrl: undefined; database: string };
  readonly machine: MachineInfo;
  readonly scenarios: readonly ScenarioResult[];
  /** Scenarios that threw, with the message. */
  readonly failures: readonly { id: number; error: string }[];
  /** Scenarios that could not run here (the events scenarios without a broker), with the reason. */
  readonly skipped?: readonly { id: number; reason: string }[];
  /** Of every service instance the run started (the events scenarios start their own). */
  readonly serviceLog: {
    readonly lines: number;
    readonly errorLines: number;
    readonly bytes: number;
    readonly files?: readonly string[];
  };
  /** The previous full run's headline numbers, for the before/after table. */
  readonly previous?: {
    readonly startedAt: string;
    readonly scenarios: readonly { id: number; service: Measurement; ratio?: number }[];
  };
  /** Scenarios this (full) run did not measure, measured since at the issue's sizes in runs of their own. */
  readonly separate?: readonly SeparateScenario[];
}

/** A scenario added after the recorded full run, measured at the issue's sizes on its own (`BENCH_SCENARIOS`). */
export interface SeparateScenario {
  readonly startedAt: string;
  /** The scenarios of that run (`BENCH_SCENARIOS`). */
  readonly scenarios: readonly number[];
  readonly machine: MachineInfo;
  readonly result: ScenarioResult;
}

const RESULTS_JSON = path.join(PROJECT_ROOT, 'bench', 'results.json');
const BENCHMARKS_MD = path.join(PROJECT_ROOT, 'BENCHMARKS.md');

function readPrevious(file: string): RunReport | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RunReport;
  } catch {
    return undefined;
  }
}

async function writeJsonAndMarkdown(json: string, markdown: string, report: RunReport): Promise<void> {
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(markdown, renderMarkdown(report));
}

/**
 * Keeps the run's scenarios that the recorded full run lacks beside it in bench/results.json (replacing earlier
 * runs of the same scenarios) and renders BENCHMARKS.md again; answers their numbers.
 */
async function recordSeparately(run: RunReport, recorded: RunReport): Promise<number[]> {
  const added = run.scenarios.filter((scenario) => !recorded.scenarios.some((full) => full.id === scenario.id));
  if (added.length === 0) return [];
  const ids = added.map((scenario) => scenario.id);
  const separate = [
    ...(recorded.separate ?? []).filter((kept) => !ids.includes(kept.result.id)),
    ...added.map((result) => ({
      startedAt: run.startedAt,
      scenarios: run.config.scenarios,
      machine: run.machine,
      result,
    })),
  ].sort((a, b) => a.result.id - b.result.id);
  await writeJsonAndMarkdown(RESULTS_JSON, BENCHMARKS_MD, { ...recorded, separate });
  return ids;
}

/**
 * Full runs write BENCHMARKS.md and bench/results.json; other runs bench/results/smoke.{md,json}, and a run at the
 * issue's sizes also records there the scenarios the full run lacks (`recorded`).
 */
export async function writeReport(
  run: RunReport,
): Promise<{ markdown: string; json: string; recorded: readonly number[] }> {
  const before = readPrevious(RESULTS_JSON);
  await mkdir(RESULTS_DIR, { recursive: true });
  if (run.full) {
    const previous = before?.full
      ? {
          startedAt: before.startedAt,
          scenarios: before.scenarios.map(({ id, service, ratio }) => ({ id, service, ratio })),
        }
      : undefined;
    const separate = before?.separate?.filter((kept) => !run.scenarios.some((s) => s.id === kept.result.id));
    await writeJsonAndMarkdown(RESULTS_JSON, BENCHMARKS_MD, { ...run, previous, separate });
    return { markdown: BENCHMARKS_MD, json: RESULTS_JSON, recorded: [] };
  }
  const json = path.join(RESULTS_DIR, 'smoke.json');
  const markdown = path.join(RESULTS_DIR, 'smoke.md');
  await writeJsonAndMarkdown(json, markdown, run);
  const recorded = run.config.issueSizes && before ? await recordSeparately(run, before) : [];
  return { markdown, json, recorded };
}

// `npx tsx bench/report.ts`: renders BENCHMARKS.md again from bench/results.json (after editing bench/notes.md).
if (path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const report = readPrevious(RESULTS_JSON);
  if (!report) throw new Error(`${RESULTS_JSON} is missing or unreadable: run npm run bench first`);
  await writeFile(BENCHMARKS_MD, renderMarkdown(report));
  console.log(
    `rendered ${path.relative(process.cwd(), BENCHMARKS_MD)} from ${path.relative(process.cwd(), RESULTS_JSON)}`,
  );
}

/** The table for the terminal. */
export function printSummary(report: RunReport): void {
  console.log(`\nBenchmark ${report.full ? 'full run' : 'smoke run'}: ${num(report.totalSeconds / 60, 1)} min`);
  for (const s of report.scenarios) {
    const met = s.targets.every((t) => t.met);
    console.log(
      `${met ? 'MET   ' : 'MISSED'} ${s.id}. ${s.title}\n       ${throughput(s.service)}, p50/p99 ${latency(s.service)}, ` +
        `RSS ${num(s.service.peakRssMb)} MB; ceiling ${throughput(s.ceiling)}; ratio ${s.ratio?.toFixed(2) ?? '–'}`,
    );
    for (const t of s.targets.filter((target) => !target.met)) console.log(`       missed: ${t.target}: ${t.actual}`);
  }
  for (const f of report.failures) console.log(`FAILED ${f.id}: ${f.error}`);
  for (const s of report.skipped ?? []) console.log(`SKIPPED ${s.id}: ${s.reason}`);
}
