import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { freePort } from '../support/ports.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 27 item 7: Prism's validating proxy (@stoplight/prism-cli, a tool nobody on the project wrote) between a
 * client and the service, holding every answer to the document the service serves. With --errors an answer that
 * breaks the document becomes a 500 with an `sl-violations` header instead of reaching the client.
 */
const ctx = useTestApp();
const HAL = 'application/hal+json';
const PRISM = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'prism');
const STARTUP_MS = 90_000;

interface Prism {
  readonly url: string;
  stop(): Promise<void>;
}

/** `prism proxy <document> <upstream> --errors` on a port of its own, once it listens. */
async function startPrism(document: string, upstream: string): Promise<Prism> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    PRISM,
    ['proxy', document, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)],
    { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`prism did not listen within ${STARTUP_MS} ms:\n${output}`)),
      STARTUP_MS,
    );
    const read = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly violations: string | null;
  readonly body: string;
}

async function send(prism: Prism, target: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${prism.url}${target}`, {
    ...init,
    headers: { Authorization: bearer(), Accept: HAL, ...(init.headers as Record<string, string>) },
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    violations: response.headers.get('sl-violations'),
    body: await response.text(),
  };
}

const PIECES = { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 };
const SKU = `PRISM-${Date.now()}`;

let server: http.Server;
let upstream: string;
let workDir: string;
let prism: Prism;
/** The same proxy on the document as it declared D11's 404 before issue 27: with a body in `content`. */
let prismOnOldDeclaration: Prism;

beforeAll(async () => {
  server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const created = await fetch(`${upstream}/v1/products`, {
    method: 'POST',
    headers: { Authorization: bearer(), 'Content-Type': 'application/json' },
    body: JSON.stringify([{ sku: SKU, baseUnit: PIECES }]),
  });
  expect(created.status).toBe(201);
  const served = (await (await fetch(`${upstream}/v3/api-docs`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
  };
  const notFound = served.paths['/v1/products']!.get!.responses['404']!;
  notFound.content = notFound['x-optional-content'];
  delete notFound['x-optional-content'];
  workDir = await mkdtemp(path.join(os.tmpdir(), 'prism-'));
  const oldDocument = path.join(workDir, 'old-openapi.json');
  await writeFile(oldDocument, JSON.stringify(served));
  [prism, prismOnOldDeclaration] = await Promise.all([
    startPrism(`${upstream}/v3/api-docs`, upstream),
    startPrism(oldDocument, upstream),
  ]);
}, 2 * STARTUP_MS);

afterAll(async () => {
  await Promise.all([prism?.stop(), prismOnOldDeclaration?.stop()]);
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("Prism's proxy validation against the served document", () => {
  it('passes the Product found by SKU, its 304, and a create answered 201 without a body', async () => {
    const found = await send(prism, `/v1/products?sku=${SKU}`);
    const tag = (
      await fetch(`${upstream}/v1/products?sku=${SKU}`, { headers: { Authorization: bearer(), Accept: HAL } })
    ).headers.get('etag')!;
    const unchanged = await send(prism, `/v1/products?sku=${SKU}`, { headers: { 'If-None-Match': tag } });
    const created = await send(prism, '/v1/products', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify([{ sku: `${SKU}-2`, baseUnit: PIECES }]),
    });

    expect(found).toMatchObject({ status: 200, contentType: `${HAL}; charset=utf-8`, violations: null });
    expect(JSON.parse(found.body)).toMatchObject({ sku: SKU });
    expect(unchanged).toEqual({ status: 304, contentType: null, violations: null, body: '' });
    expect(created).toMatchObject({ status: 201, violations: null, body: '' });
  });

  it('passes both 404s of D11: not.found for an unknown SKU, and no body at all for a UOM the Product lacks', async () => {
    const unknown = await send(prism, '/v1/products?sku=NO-SUCH-SKU');
    const foreignUom = await send(prism, `/v1/products?sku=${SKU}&uom=KG`);

    expect(unknown).toEqual({
      status: 404,
      contentType: `${HAL}; charset=utf-8`,
      violations: null,
      body: '{"message":"No Product with SKU [NO-SUCH-SKU] exists","messageKey":"not.found","httpStatus":"404"}',
    });
    expect(foreignUom).toEqual({ status: 404, contentType: null, violations: null, body: '' });
  });

  it('reported the body-less 404 as a violation while the document declared the 404 with a body', async () => {
    const foreignUom = await send(prismOnOldDeclaration, `/v1/products?sku=${SKU}&uom=KG`);

    expect(foreignUom.status).toBe(500);
    expect(JSON.parse(foreignUom.violations ?? '[]')).toEqual([
      {
        location: ['response'],
        severity: 'Error',
        message:
          'The received media type "" does not match the one specified in the current response: application/hal+json',
      },
      { location: ['response', 'body'], severity: 'Error', code: 'type', message: 'Response body must be object' },
    ]);
  });
});
