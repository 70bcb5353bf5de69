import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import { waitForExit, type ServiceProcess } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 37 item 8, D39: an open event stream made SIGTERM wait the whole SHUTDOWN_TIMEOUT_MS (60 s here). The
 * stream must end at once, with a comment saying why, and the process exit cleanly long before the deadline.
 */
const SHUTDOWN_TIMEOUT_MS = 60_000;

let database: TestDatabase;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  service = (await startServicesOnDatabase(database.url, 1, { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) }))[0]!;
}, 120_000);

afterAll(async () => {
  if (service) await stopServices([service]);
  await database?.drop();
});

/** Opens an event stream; resolves with its text once it has begun, and `ended` once the service ended it. */
function openStream(): Promise<{ text: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${service!.baseUrl}/v1/events`, {
      headers: { Authorization: bearer(), Accept: 'text/event-stream' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      const ended = new Promise<void>((done) => res.on('end', done));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\n\n')) resolve({ text: () => text, ended });
      });
    });
  });
}

describe('SIGTERM with open event streams (D39)', () => {
  it('ends the streams at once with a comment, and the process exits well before the shutdown deadline', async () => {
    const streams = await Promise.all([openStream(), openStream(), openStream()]);
    const started = Date.now();

    service!.child.kill('SIGTERM');
    await Promise.all(streams.map((stream) => stream.ended));
    const exit = await waitForExit(service!, SHUTDOWN_TIMEOUT_MS);

    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const stream of streams) expect(stream.text()).toMatch(/: this instance is stopping; reconnect\n\n$/);
    service = undefined;
  }, 90_000);
});
