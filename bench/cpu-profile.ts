/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): the functions and the packages/files with the most self time,
 * and the functions with the most inclusive time; optionally the call paths into one function.
 * Usage: npx tsx bench/cpu-profile.ts <file or directory> [top] [function name]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Call paths (leaf first, 14 frames) ending in functions whose name matches `callersOf`, by time. */
  readonly callers: [string, number][];
  readonly selfByFunction: [string, number][];
  readonly selfByModule: [string, number][];
  readonly inclusiveByFunction: [string, number][];
}

function moduleOf(url: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return url;
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1]!;
  const inProject = /\/(dist|src|bench)\/(.*)$/.exec(url);
  return inProject ? `${inProject[1]}/${inProject[2]}` : path.basename(url);
}

function functionKey(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${moduleOf(url)}:${lineNumber + 1}`;
}

const top = (map: Map<string, number>, count: number): [string, number][] =>
  [...map].sort((a, b) => b[1] - a[1]).slice(0, count);

export function summariseProfile(profile: Profile, count = 25, callersOf?: string): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const self = new Map<string, number>();
  const modules = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callers = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node) return;
    totalMs += ms;
    const key = functionKey(node);
    self.set(key, (self.get(key) ?? 0) + ms);
    const module = moduleOf(node.callFrame.url);
    modules.set(module, (modules.get(module) ?? 0) + ms);
    if (callersOf && node.callFrame.functionName === callersOf) {
      const frames: string[] = [];
      for (let at: number | undefined = id; at !== undefined && frames.length < 14; at = parentOf.get(at)) {
        const frame = byId.get(at);
        if (frame) frames.push(functionKey(frame));
      }
      const chain = frames.join(' < ');
      callers.set(chain, (callers.get(chain) ?? 0) + ms);
    }
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at);
      if (!frame) break;
      const frameKey = functionKey(frame);
      if (seen.has(frameKey)) continue;
      seen.add(frameKey);
      inclusive.set(frameKey, (inclusive.get(frameKey) ?? 0) + ms);
    }
  });
  return {
    totalMs,
    callers: top(callers, count),
    selfByFunction: top(self, count),
    selfByModule: top(modules, count),
    inclusiveByFunction: top(inclusive, count * 2),
  };
}

function print(title: string, rows: [string, number][], totalMs: number): void {
  console.log(`\n${title}`);
  for (const [key, ms] of rows) {
    console.log(`${((ms / totalMs) * 100).toFixed(1).padStart(6)} %  ${ms.toFixed(0).padStart(8)} ms  ${key}`);
  }
}

/** A profile file, or the largest profile in a directory (the main thread's; loader threads write small ones). */
function profileFile(argument: string | undefined): string | undefined {
  if (!argument || !statSync(argument).isDirectory()) return argument;
  const files = readdirSync(argument)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => path.join(argument, name));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

const file = profileFile(process.argv[2]);
if (file && path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const summary = summariseProfile(
    JSON.parse(readFileSync(file, 'utf8')) as Profile,
    Number(process.argv[3] ?? 25),
    process.argv[4],
  );
  console.log(`${file}: ${summary.totalMs.toFixed(0)} ms sampled`);
  print('self time by module', summary.selfByModule, summary.totalMs);
  print('self time by function', summary.selfByFunction, summary.totalMs);
  print('inclusive time by function', summary.inclusiveByFunction, summary.totalMs);
  if (process.argv[4]) print(`call paths into ${process.argv[4]}`, summary.callers, summary.totalMs);
}
