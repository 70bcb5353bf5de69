import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku } from '../support/builders.js';
import { runCommand, runCommandInterrupted, useImportCommand, type CommandOutcome } from '../support/command.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 2: Ctrl-C after the service has stored the import but before its answer reached the command.
 * A proxy between them holds that one answer back. The command, interrupted, asks the service with the same
 * Idempotency-Key, is not told that nothing was stored, and says the import may be stored and that running it again
 * is safe; run again, it gets the first run's answer and nothing is stored twice.
 */
const IMPORT_CLI = path.join(PROJECT_ROOT, 'dist', 'products', 'import-cli.js');
const PRODUCTS = 50;
const TOKEN = bearer().slice('Bearer '.length);

const ctx = useTestApp();
const command = useImportCommand(() => ctx.app);

let proxy: http.Server;
let proxyUrl: string;
/** Resolves once the service has answered the first request, which the proxy then keeps from the command. */
let firstAnswerHeld: Promise<void>;

beforeAll(async () => {
  let held: () => void;
  firstAnswerHeld = new Promise((resolve) => (held = resolve));
  let requests = 0;
  proxy = http.createServer((req, res) => {
    const first = ++requests === 1;
    const upstream = http.request(new URL(req.url!, command.url), { method: req.method, headers: req.headers });
    upstream.on('response', (answer) => {
      if (first) {
        answer.resume();
        held();
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
});

/** Runs the command on `file` through the proxy and interrupts it once the service has answered. */
async function interruptedOnceAnswered(file: string): Promise<CommandOutcome> {
  return runCommandInterrupted([IMPORT_CLI, '--url', proxyUrl, file], { TOKEN }, () => firstAnswerHeld);
}

async function stored(prefix: string): Promise<number> {
  const { rows } = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku LIKE $1', [
    `${prefix}-%`,
  ]);
  return rows[0]!.n;
}

const keyOf = (outcome: CommandOutcome): string | undefined =>
  /^Idempotency-Key: ([0-9a-f]{64})\n/.exec(outcome.stderr)?.[1];

describe('npm run import interrupted after the service stored the file (D38)', () => {
  it('says the service may have stored it, and the same command run again stores nothing twice', async () => {
    const prefix = uniqueSku('SIGINT-STORED');
    const text = Array.from(
      { length: PRODUCTS },
      (_, index) => `${JSON.stringify(aProduct({ sku: `${prefix}-${index}` }))}\n`,
    ).join('');
    const file = await command.givenFile(`${prefix}.ndjson`, text);

    const interrupted = await interruptedOnceAnswered(file);

    expect(interrupted.code).toBe(130);
    expect(keyOf(interrupted)).toMatch(/^[0-9a-f]{64}$/);
    expect(interrupted.stderr).toMatch(
      /Interrupted: the service may have stored it; run the same command again, it is idempotent\n$/,
    );
    expect(interrupted.stdout).toBe('');
    expect(await stored(prefix)).toBe(PRODUCTS);

    const again = await runCommand([IMPORT_CLI, '--url', proxyUrl, file], { TOKEN });

    expect(again.code).toBe(0);
    expect(keyOf(again)).toBe(keyOf(interrupted));
    expect(again.stdout).toMatch(
      new RegExp(
        '^An earlier run with this Idempotency-Key stored the file; nothing was stored again:\\n' +
          `Imported ${PRODUCTS} Products in \\d+\\.\\d s \\([\\d,]+/s\\): ${PRODUCTS} created, 0 skipped, 0 updated\\n$`,
      ),
    );
    expect(await stored(prefix)).toBe(PRODUCTS);
  }, 60_000);
});
