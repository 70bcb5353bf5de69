import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/ports.js';
import { stopServices } from '../support/service-cluster.js';
import {
  ensureBuilt,
  PROJECT_ROOT,
  startService,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';
import { TEST_SECRET } from '../support/tokens.js';

/**
 * Issue 16: the README runs as written. Every `bash` block (except those marked `<!-- README test: not run … -->`)
 * runs in order in one shell against the built service on an empty database, with only `localhost:8080` turned
 * into the service's port. Each `curl` must get the status its line's comment starts with (`# 201`, `# → 404`), or
 * a 2xx when the comment names none; variables the examples use must come from earlier examples.
 */
const SKIP_MARK = '<!-- README test: not run';
const CURL_MARK = 'README-CURL';

interface Example {
  /** The README line the command starts on. */
  readonly line: number;
  readonly command: string;
  /** The exact status the comment promises, or undefined for any 2xx. */
  readonly status?: number;
}

interface Block {
  readonly line: number;
  readonly text: string;
}

function runnableBlocks(readme: string): Block[] {
  const lines = readme.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```bash') continue;
    const end = lines.indexOf('```', i + 1);
    if (!lines[i - 1]?.startsWith(SKIP_MARK)) blocks.push({ line: i + 2, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Each `curl` of the blocks in the order the shell runs them, with what its line promises. */
function examplesOf(blocks: readonly Block[]): Example[] {
  const examples: Example[] = [];
  for (const block of blocks) {
    const lines = block.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const start = i;
      let command = lines[i]!;
      while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)}${lines[++i]!}`;
      const comment = /\s#\s(.*)$/.exec(command)?.[1] ?? '';
      const promised = /^(?:→\s*)?([1-5]\d\d)\b/.exec(comment)?.[1];
      for (let n = command.match(/\bcurl\b/g)?.length ?? 0; n > 0; n--) {
        examples.push({
          line: block.line + start,
          command: command.trim(),
          status: promised === undefined ? undefined : Number(promised),
        });
      }
    }
  }
  return examples;
}

let db: TestDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureBuilt();
  service = startService(
    { NODE_ENV: 'production', LOG_LEVEL: 'warn', AUTH_JWT_SECRET: TEST_SECRET, DATABASE_URL: db.url },
    await freePort(),
  );
  await waitUntilUp(service, 30_000);
}, 180_000);

afterAll(async () => {
  if (service) await stopServices([service]);
  await db?.drop();
}, 60_000);

describe('the README', () => {
  it('runs as written: every example answers what its line shows', async () => {
    const readme = await readFile(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const blocks = runnableBlocks(readme);
    const examples = examplesOf(blocks);
    const script = [
      'set -e -o pipefail',
      // Every curl reports its status on stderr, in order, without touching what the example prints or pipes.
      `curl() { command curl --show-error -w '%{stderr}${CURL_MARK} %{http_code}\\n' "$@"; }`,
      ...blocks.map((block) => block.text.replaceAll('localhost:8080', `127.0.0.1:${service.port}`)),
    ].join('\n');

    const run = await promisify(execFile)('bash', ['-c', script], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, AUTH_JWT_SECRET: TEST_SECRET },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 120_000,
    }).catch((error: { stdout: string; stderr: string; code: number }) => error);

    const statuses = run.stderr
      .split('\n')
      .filter((line) => line.startsWith(CURL_MARK))
      .map((line) => Number(line.slice(CURL_MARK.length + 1)));
    const mismatches = examples.flatMap((example, index) => {
      const status = statuses[index];
      const promised =
        example.status === undefined
          ? status !== undefined && status >= 200 && status < 300
          : status === example.status;
      return promised
        ? []
        : [
            `README line ${example.line}: got ${status ?? 'no answer'}, shows ${example.status ?? '2xx'}: ${example.command}`,
          ];
    });
    expect(
      mismatches,
      run.stderr
        .split('\n')
        .filter((line) => !line.startsWith(CURL_MARK))
        .join('\n'),
    ).toEqual([]);
    expect(statuses).toHaveLength(examples.length);
    expect(examples.length).toBeGreaterThan(50);
  }, 180_000);
});
