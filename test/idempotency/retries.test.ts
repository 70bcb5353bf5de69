import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { bearer, signToken } from '../support/tokens.js';

const ctx = useTestApp();

const product = (sku: string): object => ({
  sku,
  baseUnit: { unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude: 1 },
});

function createProducts(key: string, body: unknown, token = signToken()): request.Test {
  return request(ctx.app)
    .post('/v1/products')
    .set('Authorization', bearer(token))
    .set('Idempotency-Key', key)
    .send(body as object);
}

async function count(sku: string): Promise<number> {
  const result = await ctx.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM product WHERE sku = $1', [sku]);
  return result.rows[0]!.n;
}

describe('Idempotency-Key on writes (issue 7)', () => {
  it('answers a retry with the stored first response without creating the product again', async () => {
    const first = await createProducts('key-retry-1', [product('IDEM-1')]);
    const retry = await createProducts('key-retry-1', [product('IDEM-1')]);

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await count('IDEM-1')).toBe(1);
  });

  it('answers the same key with a different request with 422 and changes nothing', async () => {
    await createProducts('key-reuse', [product('IDEM-2')]);
    const reused = await createProducts('key-reuse', [product('IDEM-3')]);

    expect(reused.status).toBe(422);
    expect(reused.headers['content-type']).toBe('application/hal+json; charset=utf-8');
    expect(reused.body).toEqual({
      message: 'Idempotency-Key [key-reuse] was used for a different request',
      messageKey: 'owms.common.idempotency.keyReused',
      obj: ['key-reuse'],
      httpStatus: '422',
      class: 'String',
    });
    expect(await count('IDEM-3')).toBe(0);
  });

  it('hashes the body text as it arrived, as before the text stopped being kept, and the same text compressed alike', async () => {
    // Three times 46 kB of multi-byte characters: the body arrives in several pieces.
    const details = { note: 'Größe — 日本 🚚'.repeat(2_000) };
    const text = JSON.stringify(['IDEM-12', 'IDEM-13', 'IDEM-14'].map((sku) => ({ ...product(sku), details })));
    const first = await createProducts('key-hash', text).set('Content-Type', 'application/json');
    const compressed = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Idempotency-Key', 'key-hash')
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .serialize((raw: unknown) => raw as string)
      .send(gzipSync(text));

    expect([first.status, compressed.status]).toEqual([201, 201]);
    expect(compressed.headers['idempotent-replayed']).toBe('true');
    const stored = await ctx.db.pool.query('SELECT request_hash FROM idempotency_record WHERE key = $1', ['key-hash']);
    const hash = createHash('sha256').update(`POST /v1/products\n${text}`).digest('hex');
    expect(stored.rows).toEqual([{ request_hash: hash }]);
    expect(await count('IDEM-12')).toBe(1);
  });

  it('keeps keys apart per token subject', async () => {
    const alice = await createProducts('shared-key', [product('IDEM-4')], signToken({ sub: 'alice' }));
    const bob = await createProducts('shared-key', [product('IDEM-5')], signToken({ sub: 'bob' }));

    expect([alice.status, bob.status]).toEqual([201, 201]);
    expect([await count('IDEM-4'), await count('IDEM-5')]).toEqual([1, 1]);
  });

  it('does the work once when retries race the original', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () => createProducts('key-race', [product('IDEM-6')])),
    );

    expect(attempts.map((response) => response.status)).toEqual(Array(8).fill(201));
    expect(new Set(attempts.map((response) => response.headers.location)).size).toBe(1);
    expect(attempts.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await count('IDEM-6')).toBe(1);
  });

  it('stores nothing for a request that failed validation, so its retry is validated again', async () => {
    const invalid = await createProducts('key-invalid', [{ sku: 'IDEM-7' }]);
    const again = await createProducts('key-invalid', [{ sku: 'IDEM-7' }]);

    expect([invalid.status, again.status]).toEqual([400, 400]);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const stored = await ctx.db.pool.query('SELECT 1 FROM idempotency_record WHERE key = $1', ['key-invalid']);
    expect(stored.rowCount).toBe(0);
  });

  it('answers an Idempotency-Key that is not visible ASCII with 400 naming the header', async () => {
    const response = await createProducts('bad key with spaces', [product('IDEM-8')]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['Idempotency-Key'] });
    expect(await count('IDEM-8')).toBe(0);
  });

  it('answers the retry of a request that met a conflict with the same conflict, nothing stored', async () => {
    await createProducts('key-a', [product('IDEM-9')]);
    const conflict = await createProducts('key-b', [product('IDEM-9')]);
    const retry = await createProducts('key-b', [product('IDEM-9')]);

    expect(conflict.status).toBe(409);
    expect(retry.status).toBe(409);
    expect(retry.body).toEqual(conflict.body);
    expect(await count('IDEM-9')).toBe(1);
  });

  it('forgets a key once it has expired: the retry is handled as a new request', async () => {
    await createProducts('key-expiring', [product('IDEM-10')]);
    await ctx.db.pool.query("UPDATE idempotency_record SET expires_at = now() - interval '1 second' WHERE key = $1", [
      'key-expiring',
    ]);
    const late = await createProducts('key-expiring', [product('IDEM-10')]);

    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ messageKey: 'owms.wms.inv.product.alreadyExists', obj: ['IDEM-10'] });
    expect(late.headers['idempotent-replayed']).toBeUndefined();
  });

  it('reserves once when an allocation is retried while it runs', async () => {
    const pc = (magnitude: number): object => ({ unitType: ['org.openwms.core.units.api.PieceUnit', 'PC'], magnitude });
    await createProducts('key-stock-product', [product('IDEM-11')]);
    await request(ctx.app)
      .post('/v1/transport-units/IDEM-TU/load-units/1/packaging-units?loadUnitType=BOX')
      .set('Authorization', bearer())
      .send([{ product: { sku: 'IDEM-11' }, quantity: pc(10) }])
      .expect(201);

    const attempts = await Promise.all(
      Array.from({ length: 5 }, () =>
        request(ctx.app)
          .post('/allocation/transport-units')
          .set('Authorization', bearer())
          .set('Idempotency-Key', 'key-allocate')
          .send({ sku: 'IDEM-11', qty: pc(4) }),
      ),
    );

    expect(attempts.map((response) => response.status)).toEqual(Array(5).fill(200));
    expect(new Set(attempts.map((response) => JSON.stringify(response.body))).size).toBe(1);
    const reserved = await ctx.db.pool.query<{ reserved: string }>(
      `SELECT sum(pu.reserved_base)::text AS reserved FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
        WHERE p.sku = 'IDEM-11'`,
    );
    expect(reserved.rows[0]!.reserved).toBe('4');
  });
});
