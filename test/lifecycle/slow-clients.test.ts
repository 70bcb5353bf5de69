import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import {
  ensureBuilt,
  startService,
  waitForExit,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';
import { TEST_SECRET } from '../support/tokens.js';

let service: ServiceProcess;
let dataDir: string;

beforeAll(async () => {
  await ensureBuilt();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'inventory-slow-clients-'));
  service = startService(
    { AUTH_JWT_SECRET: TEST_SECRET, DATA_DIR: dataDir, LOG_LEVEL: 'warn', HTTP_HEADERS_TIMEOUT_MS: '1000' },
    await freePort(),
  );
  await waitUntilUp(service);
}, 120_000);

afterAll(async () => {
  service?.child.kill('SIGTERM');
  if (service) await waitForExit(service, 20_000).catch(() => service.child.kill('SIGKILL'));
  await rm(dataDir, { recursive: true, force: true });
});

/** Opens a connection that sends a request line and then one header line every 300 ms, forever. */
function trickle(port: number): Promise<{ closedAfterMs: number; answer: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /index HTTP/1.1\r\nHost: localhost\r\n'));
    const timer = setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 300);
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - started, answer });
    });
  });
}

describe('slow clients (issue 7: request and header timeouts)', () => {
  it('closes a connection whose headers do not arrive within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { closedAfterMs, answer } = await trickle(service.port);

    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeLessThan(10_000);
  }, 30_000);

  it('still serves other clients while one trickles', async () => {
    const slow = trickle(service.port);
    const response = await fetch(`${service.baseUrl}/actuator/health`);

    expect(response.status).toBe(200);
    await slow;
  }, 30_000);

  it('answers a request the HTTP parser refuses with a server-declined 400 body and a request id', async () => {
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const socket = net.connect(service.port, '127.0.0.1', () =>
        socket.write(Buffer.concat([Buffer.from('GET /ind'), Buffer.from([0xff]), Buffer.from('ex HTTP/1.1\r\n\r\n')])),
      );
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    const [head = '', body = ''] = answer.split('\r\n\r\n');

    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/i);
    expect(JSON.parse(body)).toMatchObject({
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      path: '',
    });
  }, 30_000);
});
