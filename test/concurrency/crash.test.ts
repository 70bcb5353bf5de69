import http from 'node:http';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProductUnit, aQuantity } from '../support/builders.js';
import { backends, lockWaiter, waitFor } from '../support/pg-activity.js';
import { startServicesOnDatabase, stopServices } from '../support/service-cluster.js';
import type { ServiceProcess } from '../support/service-process.js';
import {
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  toleratePoolTeardown,
  unique,
} from '../support/stock-api.js';
import { bearer } from '../support/tokens.js';

/**
 * A service process killed with SIGKILL in the middle of a large request leaves all or nothing of it: every
 * request is one transaction (D10, D18, D21), and PostgreSQL rolls back what the dead process never committed.
 */
const ctx = useTestApp();
const started: ServiceProcess[] = [];

beforeAll(() => toleratePoolTeardown(ctx.db.pool));
afterEach(async () => stopServices(started), 60_000);
afterAll(async () => stopServices(started), 60_000);

/** A service with a long lock timeout, so that a request held by the test waits instead of failing. */
async function aService(): Promise<ServiceProcess> {
  const [service] = await startServicesOnDatabase(ctx.db.url, 1, { DB_LOCK_TIMEOUT_MS: '600000' });
  started.push(service!);
  return service!;
}

interface InFlight {
  /** Resolves once the whole request has been handed to the socket. */
  sent: Promise<void>;
  /** The status, or the socket error when no response came. */
  outcome: Promise<{ status?: number; error?: string }>;
}

function post(service: ServiceProcess, path: string, body: unknown): InFlight {
  const payload = Buffer.from(JSON.stringify(body));
  let sent!: () => void;
  const sentPromise = new Promise<void>((resolve) => (sent = resolve));
  const outcome = new Promise<{ status?: number; error?: string }>((resolve) => {
    const request = http.request(`${service.baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: bearer(), 'Content-Type': 'application/json', 'Content-Length': payload.length },
    });
    request.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode });
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(payload, () => sent());
  });
  return { sent: sentPromise, outcome };
}

async function sessionsGone(pool: pg.Pool): Promise<void> {
  await waitFor('the dead service sessions to end', async () =>
    (await backends(pool)).some((backend) => backend.applicationName === 'inventory-service') ? undefined : true,
  );
}

/** Ends the process with SIGKILL and waits until PostgreSQL has dropped every session it had. */
async function crash(service: ServiceProcess, pool: pg.Pool): Promise<void> {
  service.child.kill('SIGKILL');
  expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await sessionsGone(pool);
}

/**
 * Sends the request while the test holds `table` (SHARE lock), waits until the request has written and then waits
 * for the table, kills the process, and lets go. Answers what the client saw.
 */
async function crashWhileWaitingFor(
  service: ServiceProcess,
  table: string,
  path: string,
  body: unknown,
): Promise<{ status?: number; error?: string }> {
  const holder = await ctx.db.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${table} IN SHARE MODE`);
    const request = post(service, path, body);
    await request.sent;
    const waiting = await lockWaiter(ctx.db.pool, `INSERT INTO ${table}`);
    expect(waiting).toEqual(expect.objectContaining({ applicationName: 'inventory-service', writing: true }));
    service.child.kill('SIGKILL');
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
    return await request.outcome;
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
    await sessionsGone(ctx.db.pool);
  }
}

async function count(pool: pg.Pool, sql: string, parameter: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(sql, [parameter]);
  return Number(rows[0]!.n);
}

const productsLike = (pool: pg.Pool, prefix: string): Promise<number> =>
  count(pool, 'SELECT count(*) AS n FROM product WHERE sku LIKE $1', `${prefix}%`);

describe('SIGKILL in the middle of a large request', () => {
  it('leaves none of 50 000 Products when the process dies after writing them, before committing', async () => {
    const service = await aService();
    const prefix = unique('CRASH-A');
    const products = Array.from({ length: 50_000 }, (_, i) => ({
      sku: `${prefix}-${i}`,
      baseUnit: aQuantity(1),
      units: [aProductUnit()],
    }));
    // The Products go in first; the request then waits at its ProductUnits, which the test holds.
    const seen = await crashWhileWaitingFor(service, 'product_unit', '/v1/products', products);

    expect(seen).toEqual({ error: expect.any(String) });
    expect(await productsLike(ctx.db.pool, prefix)).toBe(0);
  }, 120_000);

  it('leaves none of 10 000 PackagingUnits (nor their LoadUnit) when the process dies before the ledger', async () => {
    const sku = await givenProduct(ctx.app);
    const bk = await givenTransportUnitOn(ctx.app, (await givenLocation(ctx.app)).locationId);
    const service = await aService();
    const units = Array.from({ length: 10_000 }, () => ({ product: { sku }, quantity: aQuantity(1) }));
    // The units (and the LoadUnit made for them) go in first; the request then waits at its ledger rows.
    const path = `/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`;
    const seen = await crashWhileWaitingFor(service, 'stock_movement', path, { packagingUnits: units });

    expect(seen).toEqual({ error: expect.any(String) });
    const unitsOf = `SELECT count(*) AS n FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
                      WHERE p.sku = $1`;
    const ledgerOf = `SELECT count(*) AS n FROM stock_movement m JOIN product p ON p.id = m.product_id
                       WHERE p.sku = $1`;
    const loadUnitsOf = `SELECT count(*) AS n FROM load_unit lu JOIN transport_unit tu ON tu.id = lu.transport_unit_id
                          WHERE tu.bk = $1`;
    expect({
      units: await count(ctx.db.pool, unitsOf, sku),
      ledger: await count(ctx.db.pool, ledgerOf, sku),
      loadUnits: await count(ctx.db.pool, loadUnitsOf, bk),
    }).toEqual({ units: 0, ledger: 0, loadUnits: 0 });
  }, 120_000);

  it('leaves all or none of 50 000 Products when the process dies as soon as it writes', async () => {
    const service = await aService();
    const prefix = unique('CRASH-C');
    const products = Array.from({ length: 50_000 }, (_, i) => ({ sku: `${prefix}-${i}`, baseUnit: aQuantity(1) }));
    const request = post(service, '/v1/products', products);
    let answered = false;
    void request.outcome.then(() => (answered = true));
    await request.sent;
    await waitFor('the request to write or be answered', async () =>
      answered || (await backends(ctx.db.pool)).some((b) => b.applicationName === 'inventory-service' && b.writing)
        ? true
        : undefined,
    );

    await crash(service, ctx.db.pool);

    expect([0, 50_000]).toContain(await productsLike(ctx.db.pool, prefix));
  }, 120_000);
});
