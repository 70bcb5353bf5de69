import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, aQuantity, uniqueSku } from '../support/builders.js';
import { waitFor } from '../support/pg-activity.js';
import { givenLocation, givenProduct } from '../support/stock-api.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 2: an Idempotency-Key on a streamed (NDJSON) import or intake is bound to a hash of the body
 * taken as it streams. A retry with the same body gets the first answer (Idempotent-Replayed) and stores nothing
 * again; another body is a 422; a retry while the first still runs a 409. Over real sockets.
 */
const ctx = useTestApp();
let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer(ctx.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  readonly status: number;
  readonly replayed: string | undefined;
  readonly body: unknown;
}

function open(path: string, key: string): { req: http.ClientRequest; answered: Promise<Answer> } {
  const req = http.request({
    port,
    host: '127.0.0.1',
    method: 'POST',
    path,
    headers: { Authorization: bearer(), 'Content-Type': 'application/x-ndjson', 'Idempotency-Key': key },
  });
  const answered = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          replayed: res.headers['idempotent-replayed'] as string | undefined,
          body: JSON.parse(text) as unknown,
        }),
      );
    });
  });
  return { req, answered };
}

function send(path: string, key: string, body: string): Promise<Answer> {
  const { req, answered } = open(path, key);
  req.end(body);
  return answered;
}

const lines = (items: readonly unknown[]): string => items.map((item) => `${JSON.stringify(item)}\n`).join('');

async function count(sql: string, values: unknown[]): Promise<number> {
  return (await ctx.db.pool.query<{ n: number }>(sql, values)).rows[0]!.n;
}

const storedWithPrefix = (prefix: string): Promise<number> =>
  count('SELECT count(*)::int AS n FROM product WHERE sku LIKE $1', [`${prefix}%`]);

const keyReused = (key: string): unknown => ({
  message: `Idempotency-Key [${key}] was used for a different request`,
  messageKey: 'owms.common.idempotency.keyReused',
  obj: [key],
  class: 'String',
  httpStatus: '422',
});

describe('Idempotency-Key on a streamed import (D38)', () => {
  it('answers a product import sent again with the same key and body with the first answer, storing it once', async () => {
    const prefix = uniqueSku('IDEM');
    const body = lines([aProduct({ sku: `${prefix}-1` }), aProduct({ sku: `${prefix}-2` })]);

    const first = await send('/v1/products', `${prefix}-key`, body);
    const retry = await send('/v1/products', `${prefix}-key`, body);

    expect(first).toEqual({ status: 201, replayed: undefined, body: { created: 2, skipped: 0, updated: 0 } });
    expect(retry).toEqual({ status: 201, replayed: 'true', body: { created: 2, skipped: 0, updated: 0 } });
    expect(await storedWithPrefix(prefix)).toBe(2);
  });

  it('answers the same key with another body with 422, storing nothing of it', async () => {
    const prefix = uniqueSku('IDEM');
    await send('/v1/products', `${prefix}-key`, lines([aProduct({ sku: `${prefix}-1` })]));

    const other = await send('/v1/products', `${prefix}-key`, lines([aProduct({ sku: `${prefix}-other` })]));

    expect(other).toEqual({ status: 422, replayed: undefined, body: keyReused(`${prefix}-key`) });
    expect(await storedWithPrefix(prefix)).toBe(1);
  });

  it('answers the same key while the first import still runs with 409, then the first stores its body', async () => {
    const prefix = uniqueSku('IDEM');
    const key = `${prefix}-key`;
    const body = lines([aProduct({ sku: `${prefix}-1` }), aProduct({ sku: `${prefix}-2` })]);
    const first = open('/v1/products', key);
    first.req.write(body.slice(0, body.indexOf('\n') + 1));
    await waitFor('the first import in its COPY', async () => {
      const { rows } = await ctx.db.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY product_import%'`,
      );
      return rows.length > 0 ? true : undefined;
    });

    const meanwhile = await send('/v1/products', key, body);
    first.req.end(body.slice(body.indexOf('\n') + 1));

    expect(meanwhile).toEqual({
      status: 409,
      replayed: undefined,
      body: {
        message: `The request with Idempotency-Key [${key}] has not finished yet; retry later`,
        messageKey: 'owms.common.idempotency.inProgress',
        obj: [key],
        class: 'String',
        httpStatus: '409',
      },
    });
    expect(await first.answered).toEqual({
      status: 201,
      replayed: undefined,
      body: { created: 2, skipped: 0, updated: 0 },
    });
    expect(await storedWithPrefix(prefix)).toBe(2);
  });

  it('takes in stock once when an intake is sent again with the same key, and refuses another body with 422', async () => {
    const sku = await givenProduct(ctx);
    const { locationId } = await givenLocation(ctx);
    const unit = (magnitude: number): unknown => ({
      product: { sku },
      quantity: aQuantity(magnitude),
      actualLocation: { locationId },
    });
    const key = `${sku}-intake`;

    const first = await send('/v1/packaging-units', key, lines([unit(5), unit(10)]));
    const retry = await send('/v1/packaging-units', key, lines([unit(5), unit(10)]));
    const other = await send('/v1/packaging-units', key, lines([unit(5)]));

    expect(first).toEqual({ status: 201, replayed: undefined, body: { created: 2 } });
    expect(retry).toEqual({ status: 201, replayed: 'true', body: { created: 2 } });
    expect(other).toEqual({ status: 422, replayed: undefined, body: keyReused(key) });
    expect(
      await count(
        `SELECT sum(pu.qty_magnitude)::int AS n FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
          WHERE p.sku = $1`,
        [sku],
      ),
    ).toBe(15);
  });

  it('runs an import again under a key whose first request was rolled back', async () => {
    const prefix = uniqueSku('IDEM');
    const key = `${prefix}-key`;
    const invalid = await send('/v1/products', key, `${lines([aProduct({ sku: `${prefix}-1` })])}{"sku":1}\n`);
    const valid = await send('/v1/products', key, lines([aProduct({ sku: `${prefix}-1` })]));

    expect(invalid.status).toBe(400);
    expect(valid).toEqual({ status: 201, replayed: undefined, body: { created: 1, skipped: 0, updated: 0 } });
    expect(await storedWithPrefix(prefix)).toBe(1);
  });
});
