/**
 * Migration 0008's product_json renders a created Product's event resource in SQL; productView stays the one
 * definition (GET). These tests hold the two renderers to the same text, byte for byte, for every field and shape.
 */
import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { registerTypeParsers } from '../../src/db/type-parsers.js';
import { stringifyJson } from '../../src/json.js';
import { selectProductBySku } from '../../src/products/sql.js';
import { productView } from '../../src/products/view.js';
import { Quantity } from '../../src/units/quantity.js';
import { UNITS, type UnitKind } from '../../src/units/units.js';
import { useTestApp } from '../support/app.js';
import { aProduct, aProductUnit, aQuantity, aStackingRule, uniqueSku, type Json } from '../support/builders.js';
import { bearer } from '../support/tokens.js';
import { HOST } from './product-api.js';

const ctx = useTestApp();
// The test's own reads must see JSON columns as the service does (lossless numbers).
registerTypeParsers();

const lossless = (text: string): LosslessNumber => new LosslessNumber(text);

/** Posts Products as a JSON array or as NDJSON lines, their numbers printed as given (LosslessNumber raw). */
function post(products: readonly Json[], as: 'json' | 'ndjson', requestId: string): request.Test {
  const body = as === 'json' ? stringifyJson(products) : products.map((product) => stringifyJson(product)).join('\n');
  return request(ctx.app)
    .post('/v1/products')
    .set('Authorization', bearer())
    .set('Host', HOST)
    .set('Content-Type', as === 'json' ? 'application/json' : 'application/x-ndjson')
    .set('X-Request-Id', requestId)
    .send(body);
}

/** The resource texts of a request's events, as stored (not parsed again), in the order written. */
async function eventTexts(requestId: string): Promise<string[]> {
  const { rows } = await ctx.db.pool.query<{ text: string }>(
    'SELECT resource::text AS text FROM event_outbox WHERE request_id = $1 ORDER BY seq',
    [requestId],
  );
  return rows.map((row) => row.text);
}

/** What GET renders for the Product with this SKU, as text. */
async function nodeText(sku: string, db: Parameters<typeof selectProductBySku>[0] = ctx.db.pool): Promise<string> {
  const product = await selectProductBySku(db, sku);
  if (!product) throw new Error(`no Product ${sku}`);
  return stringifyJson(productView(product));
}

/** Creates the Products in one request and expects each event to be exactly GET's rendering of its Product. */
async function expectEventsAsGetRenders(products: readonly Json[], as: 'json' | 'ndjson'): Promise<void> {
  const requestId = uniqueSku(`product-json-${as}`);
  const response = await post(products, as, requestId);
  expect(response.status, response.text).toBe(201);
  const texts = await eventTexts(requestId);
  const expected = await Promise.all(products.map((product) => nodeText(product.sku as string)));
  expect(texts).toEqual(expected);
}

const CODES_OF: Record<UnitKind, string[]> = {
  Piece: UNITS.filter((unit) => unit.kind === 'Piece').map((unit) => unit.code),
  Weight: UNITS.filter((unit) => unit.kind === 'Weight').map((unit) => unit.code),
};

/** Strings JSON.stringify escapes in every way it has, and characters it writes as they are. */
const ESCAPES =
  'quote " backslash \\ slash / \b \f \n \r \t \u0001 \u001f \u007f \u0080 \u00a0 \u2028 \u2029 \ufeff ' +
  'Größe 日本 e\u0301 😀 \u{10ffff}';

/** details as a client may send them: nesting, arrays, every kind of number, escapes, NUL, keys JS reorders. */
const RICH_DETAILS: Json = {
  b: 1,
  '2': 'two',
  '1': 'one',
  nested: { deeper: { list: [1, 'two', null, true, false, [], {}], empty: {} } },
  numbers: [
    lossless('123456789012345.123456'),
    lossless('1e21'),
    lossless('1E+21'),
    lossless('1e400'),
    lossless('40123456789012345678'),
    lossless('19.990000000000000001'),
    lossless('9007199254740993'),
    lossless('-0'),
    lossless('1.50'),
    lossless('0.0000001'),
    0.1,
    -12.5,
    1e21,
    2 ** 53,
  ],
  'key\u0000': 'value\u0000',
  ['__proto__']: 'kept',
  [ESCAPES]: ESCAPES,
};

describe('the SQL renderer of a created Product (migration 0008) against productView', () => {
  it('writes a quantity of every unit of src/units as Quantity does, and none of an unknown unit', async () => {
    const codes = [...UNITS.map((unit) => unit.code), 'pc', 'LB'];
    const { rows } = await ctx.db.pool.query<{ code: string; json: string | null }>(
      `SELECT code, quantity_json('123456789012345.123456', code) AS json FROM unnest($1::text[]) AS code`,
      [codes],
    );

    expect(rows).toEqual([
      ...UNITS.map((unit) => ({
        code: unit.code,
        json: stringifyJson(Quantity.of('123456789012345.123456', unit.code)),
      })),
      { code: 'pc', json: null },
      { code: 'LB', json: null },
    ]);
  });

  describe.each(['json', 'ndjson'] as const)('events of a %s create', (as) => {
    it('are GET renders of Products with no optional field, with every one, and with every one null', async () => {
      const minimal = aProduct();
      const full = aProduct({
        label: ESCAPES,
        accountId: 'account "A"',
        baseUnit: aQuantity(lossless('123456789012345.123456'), 'KG'),
        description: `${ESCAPES}\n${'x'.repeat(3000)}`,
        availabilityState: 'QC_LOCKED',
        classification: 'class\tified',
        group: 'group/1',
        stockZone: 'B',
        overbookingAllowed: true,
        units: [
          aProductUnit({
            label: 'a "label"',
            code: 'code\\1',
            description: ESCAPES,
            quantity: aQuantity(lossless('0.000001'), 'MG'),
            dimension: { height: 1.5, length: 0, width: 1e-7, uom: 'm\u00b3', ignored: 1 },
            details: RICH_DETAILS,
          }),
          aProductUnit({ quantity: aQuantity(lossless('1.500000'), 'G') }),
          aProductUnit({ quantity: aQuantity(lossless('999999999999999.999999'), 'T'), dimension: {} }),
          aProductUnit({ quantity: aQuantity(lossless('1e2'), 'KG'), label: null, details: null, dimension: null }),
        ],
        dimension: { height: null, length: 2, width: null, uom: null },
        stackingRules: [aStackingRule(minimal.sku, 0), aStackingRule(minimal.sku, 2_147_483_647)],
        details: RICH_DETAILS,
      });
      const nulls = aProduct({
        label: null,
        accountId: null,
        description: null,
        availabilityState: null,
        classification: null,
        group: null,
        stockZone: null,
        overbookingAllowed: null,
        units: null,
        dimension: null,
        stackingRules: null,
        details: null,
      });
      const empties = aProduct({ label: '', units: [], stackingRules: [], details: {}, dimension: {} });

      await expectEventsAsGetRenders([minimal, full, nulls, empties], as);
    });

    it('are GET renders for every unit code as base unit, with a unit of each code of its kind', async () => {
      const products = UNITS.map((base) =>
        aProduct({
          baseUnit: aQuantity(lossless('12.25'), base.code),
          units: CODES_OF[base.kind].map((code, index) => aProductUnit({ quantity: aQuantity(index + 1, code) })),
        }),
      );

      await expectEventsAsGetRenders(products, as);
    });

    it('are GET renders of stacking rules naming Products of the request and a stored one, in their order', async () => {
      const stored = aProduct({ sku: uniqueSku('stored "stack"') });
      expect((await post([stored], as, uniqueSku('stack-seed'))).status).toBe(201);
      const first = aProduct({ sku: uniqueSku('first\\') });
      const second = aProduct({
        stackingRules: [aStackingRule(first.sku, 3), aStackingRule(stored.sku, 1), aStackingRule(first.sku, 5)],
      });

      await expectEventsAsGetRenders([second, first], as);
    });
  });

  it("writes createDt as toISOString of node-pg's reading: microseconds truncated, in any session time zone", async () => {
    const product = aProduct();
    expect((await post([product], 'json', uniqueSku('dates'))).status).toBe(201);
    const client = await ctx.db.pool.connect();
    try {
      for (const zone of ['UTC', 'Asia/Kathmandu', 'America/St_Johns']) {
        await client.query(`SET TimeZone = '${zone}'`);
        for (const instant of [
          '2026-11-26 06:05:57+00',
          '2026-11-26 06:05:57.000999+00',
          '2026-11-26 06:05:57.0005+00',
          '2026-11-26 06:05:57.123999+00',
          '2026-11-26 23:59:59.999999+00',
          '2024-02-29 00:00:00.1+00',
          '1970-01-01 00:00:00.001+00',
          '0099-12-31 23:59:59.999+00',
        ]) {
          await client.query('UPDATE product SET create_dt = $2 WHERE sku = $1', [product.sku, instant]);
          const { rows } = await client.query<{ text: string }>('SELECT resource::text AS text FROM product_json($1)', [
            product.sku,
          ]);
          expect(rows[0]!.text, `${instant} in ${zone}`).toBe(await nodeText(product.sku, client));
        }
      }
    } finally {
      client.release();
    }
  });

  it('renders nothing for a SKU no Product has', async () => {
    const { rows } = await ctx.db.pool.query('SELECT * FROM product_json($1)', [uniqueSku('nowhere')]);
    expect(rows).toEqual([]);
  });
});

describe('the SQL renderer against productView, for generated Products', () => {
  const text = (maxLength: number) =>
    fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ unit: 'binary-ascii', maxLength }));
  const withoutNul = (maxLength: number) => text(maxLength).filter((value) => !value.includes('\u0000'));
  const optional = <T>(value: fc.Arbitrary<T>) =>
    fc.option(value, { nil: undefined, freq: 3 }).chain((given) => fc.constantFrom(given, given, null));

  /** D2's magnitudes: positive, at most 15 digits before the point and 6 after, trailing zeros and exponents kept. */
  const magnitude = fc
    .record({
      whole: fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }),
      fraction: fc.stringMatching(/^[0-9]{0,6}$/),
      exponent: fc.boolean(),
    })
    .filter(({ whole, fraction }) => whole > 0n || /[1-9]/.test(fraction))
    .map(({ whole, fraction, exponent }) => lossless(`${whole}${fraction && `.${fraction}`}${exponent ? 'e0' : ''}`));

  const numberLiteral = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((value) => lossless(String(value))),
    fc
      .tuple(fc.integer({ min: 1, max: 99_999 }), fc.integer({ min: -400, max: 400 }))
      .map(([digits, exponent]) => lossless(`${digits}e${exponent}`)),
  );
  const detailKey = fc.oneof(text(8), fc.constantFrom('__proto__', 'constructor', '1', '0', 'details'));
  const { details } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text(12),
      numberLiteral,
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      tie('details'),
    ),
    details: fc.dictionary(detailKey, tie('value'), { maxKeys: 5 }),
  }));
  const dimensionValue = fc.double({ min: 0, max: 1e15, noNaN: true });
  const dimension = fc.record(
    { height: optional(dimensionValue), length: optional(dimensionValue), width: optional(dimensionValue) },
    { requiredKeys: [] },
  );

  const product = fc.constantFrom(...UNITS).chain((base) =>
    fc.record(
      {
        label: optional(withoutNul(20)),
        accountId: optional(withoutNul(20)),
        baseUnit: magnitude.map((value) => aQuantity(value, base.code)),
        description: optional(withoutNul(40)),
        availabilityState: optional(fc.constantFrom('LOCKED', 'QC_LOCKED', 'AVAILABLE')),
        classification: optional(withoutNul(10)),
        group: optional(withoutNul(10)),
        stockZone: optional(fc.constantFrom('A', 'B', 'C')),
        overbookingAllowed: optional(fc.boolean()),
        units: optional(
          fc.array(
            fc.record(
              {
                label: optional(withoutNul(10)),
                code: optional(withoutNul(10)),
                description: optional(withoutNul(10)),
                quantity: fc
                  .tuple(magnitude, fc.constantFrom(...CODES_OF[base.kind]))
                  .map(([value, code]) => aQuantity(value, code)),
                dimension: optional(dimension),
                details: optional(details),
              },
              { requiredKeys: ['quantity'] },
            ),
            { maxLength: 3 },
          ),
        ),
        dimension: optional(dimension),
        details: optional(details),
      },
      { requiredKeys: ['baseUnit'] },
    ),
  );

  it('each event is the text GET renders, whether sent as JSON or NDJSON', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(product, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('json' as const, 'ndjson' as const),
        fc.array(fc.nat(100), { maxLength: 3 }),
        async (generated, as, rulePicks) => {
          const products: Json[] = generated.map((fields) => ({ sku: uniqueSku('gen'), ...fields }));
          // Stacking rules name Products of the same request.
          rulePicks.forEach((pick, position) => {
            const holder = products[pick % products.length]!;
            const allowed = products[(pick + position) % products.length]!;
            holder.stackingRules = [
              ...((holder.stackingRules as Json[] | undefined) ?? []),
              aStackingRule(allowed.sku as string, pick),
            ];
          });
          await expectEventsAsGetRenders(products, as);
        },
      ),
      { numRuns: 60, seed: 20_261_126 },
    );
  }, 120_000);
});
