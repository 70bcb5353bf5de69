import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { aProduct, uniqueSku, type ProductJson } from '../support/builders.js';
import { bearer } from '../support/tokens.js';

/**
 * D38, issue 34 item 4: an import with `onConflict=update` or `skip` racing the delete of a Product it names decides
 * under the lock it writes with, so every round ends as one of the two serial orders would: the import first (the
 * line updated or skipped, then deleted) or the delete first (the line created). Never the line reported skipped or
 * updated while the delete took the Product away underneath.
 */
const ctx = useTestApp();
/** The 50 rounds for update; skip's wrong answer cannot be told from a serial one, so fewer. */
const ROUNDS = { update: 50, skip: 20 };
/** New Products before the raced line, so the import's statements overlap the delete. */
const FILLER = 50;
const HOST = 'inventory.example:8080';

const ndjson = (products: readonly unknown[]): string =>
  products.map((product) => `${JSON.stringify(product)}\n`).join('');

function importLines(products: readonly unknown[], onConflict: string): request.Test {
  return request(ctx.app)
    .post(`/v1/products?onConflict=${onConflict}`)
    .set('Authorization', bearer())
    .set('Host', HOST)
    .set('Content-Type', 'application/x-ndjson')
    .send(ndjson(products));
}

async function isStored(sku: string): Promise<boolean> {
  const { rows } = await ctx.db.pool.query('SELECT 1 FROM product WHERE sku = $1', [sku]);
  return rows.length === 1;
}

async function race(onConflict: 'update' | 'skip'): Promise<string> {
  const raced = aProduct({ label: 'before' });
  expect((await importLines([raced], 'fail')).status).toBe(201);
  const { rows } = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM product WHERE sku = $1', [raced.sku]);
  const filler: ProductJson[] = Array.from({ length: FILLER }, () => aProduct({ sku: uniqueSku('FILL') }));
  const [imported, deleted] = await Promise.all([
    importLines([...filler, { ...raced, label: 'after' }], onConflict),
    request(ctx.app).delete(`/v1/products/${rows[0]!.p_key}`).set('Authorization', bearer()).set('Host', HOST),
  ]);
  expect(deleted.status).toBe(204);
  const outcome = JSON.stringify({ answer: imported.body as unknown, stored: await isStored(raced.sku) });
  return outcome;
}

describe('an import racing the delete of a Product it names (D38)', () => {
  for (const onConflict of ['update', 'skip'] as const) {
    const rounds = ROUNDS[onConflict];
    it(`ends every one of ${rounds} rounds with onConflict=${onConflict} as a serial order would`, async () => {
      const importFirst = JSON.stringify({
        answer: { created: FILLER, skipped: onConflict === 'skip' ? 1 : 0, updated: onConflict === 'update' ? 1 : 0 },
        stored: false,
      });
      const deleteFirst = JSON.stringify({ answer: { created: FILLER + 1, skipped: 0, updated: 0 }, stored: true });
      const outcomes: string[] = [];
      for (let round = 0; round < rounds; round++) outcomes.push(await race(onConflict));

      // eslint-disable-next-line no-console -- how often each order won
      console.log(onConflict, outcomes.filter((o) => o === deleteFirst).length, 'of', rounds, 'delete first');
      expect(outcomes.filter((outcome) => outcome !== importFirst && outcome !== deleteFirst)).toEqual([]);
    }, 120_000);
  }
});
