import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aProduct, uniqueSku } from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { sleep } from '../support/pg-activity.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 3: an upload slower than IMPORT_MIN_BYTES_PER_SECOND over IMPORT_MIN_RATE_WINDOW_MS ends with
 * a 408 and frees its slot, and a stall's 408 names the real idle time. The 1 byte / 25 s under a 30 s stall
 * bound and a 30 s window, scaled down tenfold (window 3 s, stall 3 s, a byte every 2.5 s) so the file takes
 * seconds; the built service with its defaults otherwise.
 */
const WINDOW_MS = 3_000;
const STALL_MS = 3_000;
const TRICKLE_EVERY_MS = 2_500;

let database: TestDatabase;
let service: ServiceProcess;

beforeAll(async () => {
  database = await createTestDatabase();
  service = (
    await startServicesOnDatabase(database.url, 1, {
      IMPORT_MIN_RATE_WINDOW_MS: String(WINDOW_MS),
      IMPORT_STALL_TIMEOUT_MS: String(STALL_MS),
    })
  )[0]!;
}, 180_000);

afterAll(async () => {
  await stopServices([service].filter(Boolean));
  await database?.drop();
}, 60_000);

interface Answer {
  readonly status: number;
  readonly message: unknown;
}

function openImport(): { req: http.ClientRequest; answered: Promise<Answer> } {
  const req = http.request({
    port: service.port,
    host: '127.0.0.1',
    method: 'POST',
    path: '/v1/products',
    headers: { Authorization: bearer(), 'Content-Type': 'application/x-ndjson' },
  });
  const answered = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      res.on('end', () =>
        resolve({ status: res.statusCode!, message: (JSON.parse(text) as { message?: unknown }).message }),
      );
    });
  });
  return { req, answered };
}

/** An import of one Product, retried on 503 (no slot free) until it is answered otherwise. */
async function importRetryingForASlot(sku: string): Promise<{ status: number; afterMs: number }> {
  const started = Date.now();
  for (;;) {
    const { req, answered } = openImport();
    req.end(`${JSON.stringify(aProduct({ sku }))}\n`);
    const { status } = await answered;
    if (status !== 503) return { status, afterMs: Date.now() - started };
    await sleep(200);
  }
}

describe('an upload too slow for its import (D38)', () => {
  it('answers two clients sending a byte every 2.5 s with 408 after the 3 s window, and a third import gets a slot', async () => {
    const line = `${JSON.stringify(aProduct({ sku: uniqueSku('SLOW') }))}\n`;
    const trickles = [openImport(), openImport()];
    let sent = 0;
    for (const { req } of trickles) req.write(line[0]);
    const timer = setInterval(() => {
      sent++;
      for (const { req } of trickles) if (!req.destroyed) req.write(line[sent]);
    }, TRICKLE_EVERY_MS);
    const started = Date.now();
    // Both trickles hold their slots before the third asks: sent at once, the third's whole body could reach the
    // service before a trickle's first byte, take its slot and leave that trickle a 503 (seen once in CI).
    await sleep(1_000);

    const third = await importRetryingForASlot(uniqueSku('THIRD'));
    const answers = await Promise.all(trickles.map(({ answered }) => answered)).finally(() => clearInterval(timer));
    const answeredMs = Date.now() - started;

    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.message).toMatch(
        /^The client sent [1-3] bytes in 3\d{3} ms, slower than IMPORT_MIN_BYTES_PER_SECOND \(1024 bytes per second over 3000 ms\)$/,
      );
    }
    expect(answeredMs).toBeLessThan(3 * WINDOW_MS);
    expect(third.status).toBe(201);
    expect(third.afterMs).toBeLessThan(3 * WINDOW_MS);
    for (const { req } of trickles) req.destroy();
  }, 60_000);

  it('names in a stall 408 the time since the last byte, not the time since the body was last read', async () => {
    // Enough for the rate's window (3 KB in 3 s), so that only the stall can end it.
    const line = `${JSON.stringify(aProduct({ sku: uniqueSku('STALL'), label: 'x'.repeat(4000) }))}\n`;
    const { req, answered } = openImport();
    req.write(line.slice(0, 4000));
    await sleep(STALL_MS - 1000);
    req.write(line.slice(4000, 4001));
    const lastByteAt = Date.now();

    const answer = await answered;
    const idleMs = Date.now() - lastByteAt;

    expect(answer.status).toBe(408);
    const named = Number(/^The client sent nothing for (\d+) ms, /.exec(String(answer.message))?.[1]);
    expect(answer.message).toBe(`The client sent nothing for ${named} ms, more than IMPORT_STALL_TIMEOUT_MS (3000)`);
    expect(named).toBeGreaterThanOrEqual(STALL_MS);
    expect(named).toBeLessThanOrEqual(idleMs + 50);
    req.destroy();
  }, 60_000);
});
