import { Readable } from 'node:stream';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { postmasterPid, processesUsing, type ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/** Shared by the reliability proofs: temp folders that are always cleaned, timed requests, body checks. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A field of /proc/<pid>/status in bytes: VmRSS now, VmHWM the peak so far. */
export async function processMemory(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  return Number(kilobytes) * 1024;
}

/** A bulk body of exactly `size` bytes: as many minimal Products as fit, padded with spaces. */
export function bulkBodyOfSize(prefix: string, size: number): { text: string; count: number } {
  const products: string[] = [];
  let length = 2;
  for (let index = 0; ; index++) {
    const product = JSON.stringify({
      sku: `${prefix}-${index}`,
      baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 },
    });
    if (length + product.length + 1 > size) break;
    products.push(product);
    length += product.length + 1;
  }
  return { text: `[${products.join(',')}]`.padEnd(size, ' '), count: products.length };
}

export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/**
 * Removes the folder after ending any process still using it (an embedded postmaster and its backends have the
 * folder on their command line): SIGQUIT is PostgreSQL's immediate shutdown, taking its children with it.
 */
export async function removeTempDir(directory: string | undefined): Promise<void> {
  if (!directory) return;
  for (const pid of await processesUsing(directory)) {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // already gone
    }
  }
  for (let waited = 0; waited < 10_000 && (await processesUsing(directory)).length > 0; waited += 100) await sleep(100);
  await rm(directory, { recursive: true, force: true });
}

/** What one request saw: its status (0 when no response came), how long it took, and what came back. */
export interface Outcome {
  readonly label: string;
  readonly method: string;
  readonly path: string;
  readonly startedAt: number;
  readonly ms: number;
  readonly status: number;
  readonly failure?: string;
  readonly contentType: string;
  readonly retryAfter: string | null;
  readonly body: unknown;
}

export interface RequestSpec {
  readonly label: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
}

/** Sends one authenticated request with fetch, giving up (status 0) after `limitMs`. */
export async function timedRequest(baseUrl: string, spec: RequestSpec, limitMs: number): Promise<Outcome> {
  const startedAt = Date.now();
  const base = { label: spec.label, method: spec.method, path: spec.path, startedAt };
  try {
    const response = await fetch(`${baseUrl}${spec.path}`, {
      method: spec.method,
      headers: {
        Authorization: bearer(),
        ...(spec.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: AbortSignal.timeout(limitMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return {
      ...base,
      ms: Date.now() - startedAt,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      retryAfter: response.headers.get('retry-after'),
      body,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return {
      ...base,
      ms: Date.now() - startedAt,
      status: 0,
      failure: cause ?? (error as Error).name,
      contentType: '',
      retryAfter: null,
      body: undefined,
    };
  }
}

const SERVER_DECLINED_FIELDS = ['error', 'exception', 'message', 'path', 'status', 'timestamp'];

/**
 * D6's server-declined body `{timestamp, status, error, exception, message, path}` (application/json, path without
 * the query) with a `Retry-After` header, as readable problems: an empty list means the outcome is right.
 */
export function serverDeclinedProblems(outcome: Outcome, status: number): string[] {
  const problems: string[] = [];
  const body = outcome.body as Record<string, unknown> | undefined;
  if (outcome.status !== status) problems.push(`status ${outcome.status} (${outcome.failure ?? 'answered'})`);
  if (!outcome.contentType.startsWith('application/json')) problems.push(`content type "${outcome.contentType}"`);
  if (!/^\d+$/.test(outcome.retryAfter ?? '')) problems.push(`Retry-After "${outcome.retryAfter}"`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    problems.push(`body ${JSON.stringify(body)}`);
  } else {
    const fields = Object.keys(body).sort();
    if (fields.join() !== SERVER_DECLINED_FIELDS.join()) problems.push(`fields ${fields.join()}`);
    if (body.status !== status) problems.push(`body.status ${String(body.status)}`);
    if (body.error !== STATUS_CODES[status]) problems.push(`body.error ${String(body.error)}`);
    if (typeof body.timestamp !== 'number') problems.push(`body.timestamp ${String(body.timestamp)}`);
    if (typeof body.exception !== 'string' || body.exception === '') problems.push('body.exception empty');
    if (typeof body.message !== 'string' || /ECONN|SELECT|INSERT|\n\s+at /.test(body.message)) {
      problems.push(`body.message ${String(body.message)}`);
    }
    if (body.path !== outcome.path.split('?')[0]) problems.push(`body.path ${String(body.path)}`);
  }
  return problems.map((problem) => `${outcome.label} ${outcome.method} ${outcome.path}: ${problem}`);
}

export const is2xx = (outcome: Outcome): boolean => outcome.status >= 200 && outcome.status < 300;

export const describeOutcome = (o: Outcome): string =>
  `${o.label}: ${o.status}${o.failure ? ` ${o.failure}` : ''} after ${o.ms} ms ${JSON.stringify(o.body)}`;

/**
 * Whether the service process still runs (neither exit code nor signal; a process killed by the OOM killer has
 * only a signal), with the fatal log lines that explain why when it does not.
 */
export function survival(service: ServiceProcess): {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  fatal: string[];
} {
  const fatal = service
    .logEntries()
    .filter((entry) => Number(entry.level) >= 60)
    .map((entry) => `${String(entry.msg)}: ${String((entry.err as { message?: string } | undefined)?.message)}`);
  return { exitCode: service.child.exitCode, signal: service.child.signalCode, fatal };
}

/** The embedded postmaster of DATA_DIR and all its children (backends, checkpointer, walwriter …). */
export async function clusterProcesses(dataDir: string): Promise<number[]> {
  const postmaster = await postmasterPid(dataDir);
  if (postmaster === undefined) return [];
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The parent pid is the second field after the parenthesised command name.
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) children.push(Number(entry));
  }
  return [postmaster, ...children];
}

export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** How a plain TCP connection attempt to the port ends: 'connected' or the error code (ECONNREFUSED). */
export function connectionAttempt(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Polls until `probe` answers true; fails with `what` after `ms`. */
export async function eventually(what: string, probe: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** A JSON array of `count` items, generated as it is sent: the test never holds a body. */
export function arrayBody(item: (index: number) => string, count: number): { length: number; stream: () => Readable } {
  let length = 2 + (count - 1);
  for (let index = 0; index < count; index++) length += item(index).length;
  const stream = (): Readable =>
    Readable.from(
      (function* pieces(): Generator<string> {
        let piece = '[';
        for (let index = 0; index < count; index++) {
          piece += (index > 0 ? ',' : '') + item(index);
          if (piece.length >= 64 * 1024) {
            yield piece;
            piece = '';
          }
        }
        yield `${piece}]`;
      })(),
      { objectMode: false },
    );
  return { length, stream };
}
