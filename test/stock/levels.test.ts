import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import { HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import { TIMESTAMP } from '../support/stock.js';
import {
  allocate,
  call,
  expectStatus,
  givenGroups,
  givenLoadUnitLocked,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  givenUnitsOnLocation,
  HOST,
  pc,
  unique,
} from '../support/stock-api.js';

/** D31: a Product's stock on hand, reserved and available, where it is, and at a past instant. */
const ctx = useTestApp();

/** D40: the feed cursor of the last event a reading includes. */
const FEED_CURSOR = /^(0|[1-9]\d*)$/;

const stockOf = (query: string, accept = 'application/json') =>
  call(ctx.app, 'get', `/v1/stock?${query}`).set('Accept', accept);

async function figuresOf(query: string): Promise<Record<string, unknown>> {
  const response = await stockOf(query);
  expectStatus(response, 200, `stock ${query}`);
  return response.body as Record<string, unknown>;
}

async function loadUnitOf(bk: string, position: string): Promise<string> {
  const response = await call(ctx.app, 'get', `/v1/transport-units/${bk}/load-units`);
  return (response.body as { pKey: string; physicalPosition: string }[]).find((lu) => lu.physicalPosition === position)!
    .pKey;
}

// ZONE contains ZONE-A; OTHER stands apart. A Location in each holds TransportUnits (tuA one of ZONE-A's); LOOSE is
// a Location of ZONE-A, and NOWHERE a TransportUnit registered on the spot, without a Location.
const names = { zone: unique('ZONE'), zoneA: unique('ZONE-A'), other: unique('OTHER') };
let tuA = '';
let loose = '';
let locationA = '';
let locationOther = '';

beforeAll(async () => {
  await givenGroups(ctx.app, { name: names.zoneA, parent: names.zone }, { name: names.zone }, { name: names.other });
  locationA = (await givenLocation(ctx.app, { locationGroupName: names.zoneA })).locationId;
  locationOther = (await givenLocation(ctx.app, { locationGroupName: names.other })).locationId;
  loose = (await givenLocation(ctx.app, { locationGroupName: names.zoneA })).locationId;
  tuA = await givenTransportUnitOn(ctx.app, locationA);
});

/**
 * 10 PC in a TransportUnit in ZONE-A (LoadUnit 1), 7 PC in one in OTHER (LoadUnit 1) (LoadUnit 1) of which 3 reserved, 4 PC in a
 * locked LoadUnit 2 of OTHER's, 5 PC loose on a Location of ZONE-A, 2 PC nowhere.
 */
async function givenSpreadStock(): Promise<string> {
  const sku = await givenProduct(ctx.app);
  const tuA = await givenTransportUnitOn(ctx.app, locationA);
  const tuOther = await givenTransportUnitOn(ctx.app, locationOther);
  await givenUnitsIn(ctx.app, tuA, '1', sku, [{ quantity: pc(10) }]);
  await givenUnitsIn(ctx.app, tuOther, '1', sku, [{ quantity: pc(7) }]);
  await givenUnitsIn(ctx.app, tuOther, '2', sku, [{ quantity: pc(4) }]);
  await givenLoadUnitLocked(ctx.app, await loadUnitOf(tuOther, '2'));
  await givenUnitsOnLocation(ctx.app, loose, sku, [{ quantity: pc(5) }]);
  await givenUnitsIn(ctx.app, unique('NOWHERE'), '1', sku, [{ quantity: pc(2) }]);
  const reserved = await allocate(ctx.app, { sku, qty: pc(3) }, `?sourceLocationGroupNames=${names.other}`);
  expectStatus(reserved, 200, 'reserve in OTHER');
  return sku;
}

describe('GET /v1/stock?sku=', () => {
  it('answers zeros in the base unit for a Product without stock, as plain JSON with the instant', async () => {
    const sku = await givenProduct(ctx.app);
    const before = Date.now();
    const response = await stockOf(`sku=${sku}`, '*/*');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual({
      sku,
      onHand: pc(0),
      reserved: pc(0),
      available: pc(0),
      asOf: expect.any(String),
      feedCursor: expect.stringMatching(FEED_CURSOR),
    });
    expect(Object.keys(response.body as object)).toEqual([
      'sku',
      'onHand',
      'reserved',
      'available',
      'asOf',
      'feedCursor',
    ]);
    const asOf = (response.body as { asOf: string }).asOf;
    expect(asOf).toMatch(TIMESTAMP);
    expect(Date.parse(asOf)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('counts every unit on hand, the reservations, and as available only what allocation can take', async () => {
    const sku = await givenSpreadStock();
    // available: 10 in ZONE-A + (7 - 3) in OTHER + 2 nowhere; not the locked LoadUnit, the loose units or the
    // reserved part.
    expect(await figuresOf(`sku=${sku}`)).toEqual({
      sku,
      onHand: pc(28),
      reserved: pc(3),
      available: pc(16),
      asOf: expect.stringMatching(TIMESTAMP),
      feedCursor: expect.stringMatching(FEED_CURSOR),
    });
    expectStatus(await allocate(ctx.app, { sku, qty: pc(16) }, '?allowPartial=false'), 200, 'allocate available');
    expect(await figuresOf(`sku=${sku}`)).toMatchObject({ onHand: pc(28), reserved: pc(19), available: pc(0) });
  });

  it('answers in the base unit of a Product kept by weight, exactly', async () => {
    const sku = await givenProduct(ctx.app, { baseUnit: aQuantity(1, 'KG') });
    await givenUnitsIn(ctx.app, tuA, unique('W'), sku, [{ quantity: aQuantity(1500, 'G') }]);
    await givenUnitsOnLocation(ctx.app, loose, sku, [{ quantity: aQuantity(0.001, 'KG') }]);
    expect(await figuresOf(`sku=${sku}`)).toMatchObject({
      onHand: aQuantity(1.501, 'KG'),
      reserved: aQuantity(0, 'KG'),
      available: aQuantity(1.5, 'KG'),
    });
  });

  it('has nothing available while the Product or the unit is locked, and all of it again afterwards', async () => {
    const sku = await givenProduct(ctx.app);
    const [unit] = await givenUnitsIn(ctx.app, tuA, unique('S'), sku, [{ quantity: pc(6) }]);
    const product = (await call(ctx.app, 'get', `/v1/products?sku=${sku}`)).body as Record<string, unknown>;
    const put = (state: string) =>
      call(ctx.app, 'put', '/v1/products').send({
        ...product,
        _links: undefined,
        availabilityState: state,
        ol: undefined,
      });
    expectStatus(await put('QC_LOCKED'), 200, 'lock the product');
    expect(await figuresOf(`sku=${sku}`)).toMatchObject({ onHand: pc(6), available: pc(0) });
    expectStatus(await put('AVAILABLE'), 200, 'unlock the product');
    const problem = { messageNo: '1', messageText: 'torn', product: { sku }, quantity: pc(2) };
    const luPos = unit!.loadUnit!.physicalPosition;
    const failures = `/v1/transport-units/${tuA}/load-units/${luPos}/packaging-units/failures`;
    expectStatus(await call(ctx.app, 'post', failures).send(problem), 204, 'report a problem');
    expect(await figuresOf(`sku=${sku}`)).toMatchObject({ onHand: pc(6), reserved: pc(0), available: pc(4) });
  });

  it('counts only stock in the named LocationGroups and their children, as allocation takes it', async () => {
    const sku = await givenSpreadStock();
    expect(await figuresOf(`sku=${sku}&sourceLocationGroupNames=${names.zone}`)).toEqual({
      sku,
      onHand: pc(15),
      reserved: pc(0),
      available: pc(10),
      asOf: expect.stringMatching(TIMESTAMP),
      feedCursor: expect.stringMatching(FEED_CURSOR),
    });
    expect(await figuresOf(`sku=${sku}&sourceLocationGroupNames=${names.other},${names.zoneA}`)).toMatchObject({
      onHand: pc(26),
      reserved: pc(3),
      available: pc(14),
    });
    const tooMuch = await allocate(
      ctx.app,
      { sku, qty: pc(11) },
      `?sourceLocationGroupNames=${names.zone}&allowPartial=false`,
    );
    expect(tooMuch.status).toBe(409);
    const exactly = await allocate(
      ctx.app,
      { sku, qty: pc(10) },
      `?sourceLocationGroupNames=${names.zone}&allowPartial=false`,
    );
    expect(exactly.status).toBe(200);
  });

  it('adds rows per LocationGroup, by name with the unknown place last, that add up to the totals', async () => {
    const sku = await givenSpreadStock();
    const figures = await figuresOf(`sku=${sku}&by=locationGroup`);
    const [first, second] = [names.other, names.zoneA].sort();
    const rowOf = (name: string | null) =>
      name === names.other
        ? { locationGroupName: name, onHand: pc(11), reserved: pc(3), available: pc(4) }
        : name === names.zoneA
          ? { locationGroupName: name, onHand: pc(15), reserved: pc(0), available: pc(10) }
          : { locationGroupName: null, onHand: pc(2), reserved: pc(0), available: pc(2) };
    expect(figures).toEqual({
      sku,
      onHand: pc(28),
      reserved: pc(3),
      available: pc(16),
      asOf: expect.stringMatching(TIMESTAMP),
      feedCursor: expect.stringMatching(FEED_CURSOR),
      rows: [rowOf(first!), rowOf(second!), rowOf(null)],
    });
  });

  it('adds rows per Location with by=location', async () => {
    const sku = await givenSpreadStock();
    const figures = (await figuresOf(`sku=${sku}&by=location&sourceLocationGroupNames=${names.zoneA}`)) as {
      rows: unknown[];
    };
    expect(figures.rows).toEqual(
      [
        { locationId: locationA, onHand: pc(10), reserved: pc(0), available: pc(10) },
        { locationId: loose, onHand: pc(5), reserved: pc(0), available: pc(0) },
      ].sort((a, b) => (a.locationId < b.locationId ? -1 : 1)),
    );
    expect(figures).toMatchObject({ onHand: pc(15), available: pc(10) });
  });

  it('answers HAL with links to itself and the Product when asked for application/hal+json', async () => {
    const sku = await givenProduct(ctx.app);
    const response = await stockOf(`sku=${sku}&by=location`, 'application/hal+json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toEqual({
      sku,
      onHand: pc(0),
      reserved: pc(0),
      available: pc(0),
      asOf: expect.stringMatching(TIMESTAMP),
      feedCursor: expect.stringMatching(FEED_CURSOR),
      rows: [],
      _links: {
        self: { href: `http://${HOST}/v1/stock?sku=${sku}&by=location` },
        product: { href: `http://${HOST}/v1/products?sku=${sku}` },
      },
    });
  });

  it('is linked from the product index and from each Product', async () => {
    const sku = await givenProduct(ctx.app);
    const index = await call(ctx.app, 'get', '/v1/products/index');
    expect((index.body as { _links: Record<string, unknown> })._links).toMatchObject({
      'stock-findbysku': { href: `http://${HOST}/v1/stock?sku={sku}`, templated: true },
      'stock-findall': { href: `http://${HOST}/v1/stock` },
    });
    const product = await call(ctx.app, 'get', `/v1/products?sku=${sku}`);
    expect((product.body as { _links: Record<string, unknown> })._links).toMatchObject({
      stock: { href: `http://${HOST}/v1/stock?sku=${sku}` },
    });
  });
});

describe('GET /v1/stock?sku=&at=', () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('answers onHand and reserved as they were at that instant, without available', async () => {
    const sku = await givenProduct(ctx.app);
    const [unit] = await givenUnitsIn(ctx.app, tuA, unique('H'), sku, [{ quantity: pc(9) }]);
    // A change counts from its commit as the feed numbers it (D40): a reading now waits for that.
    await figuresOf(`sku=${sku}`);
    await pause(5);
    const afterCreate = new Date(Date.now() - 2).toISOString();
    await pause(5);
    expectStatus(await allocate(ctx.app, { sku, qty: pc(4) }), 200, 'allocate');
    await figuresOf(`sku=${sku}`);
    await pause(5);
    const afterReserve = new Date(Date.now() - 2).toISOString();
    await pause(5);
    const move = await call(ctx.app, 'put', `/v1/packaging-units/${unit!.pKey}`).send({
      actualLocation: { locationId: loose },
    });
    expectStatus(move, 200, 'move');
    await givenUnitsOnLocation(ctx.app, loose, sku, [{ quantity: pc(1) }]);

    expect(await figuresOf(`sku=${sku}&at=${afterCreate}`)).toEqual({
      sku,
      onHand: pc(9),
      reserved: pc(0),
      asOf: afterCreate,
      feedCursor: expect.stringMatching(FEED_CURSOR),
    });
    expect(await figuresOf(`sku=${sku}&at=${encodeURIComponent(afterReserve)}`)).toMatchObject({
      onHand: pc(9),
      reserved: pc(4),
    });
    expect(await figuresOf(`sku=${sku}&at=2000-01-01T00:00:00Z`)).toMatchObject({ onHand: pc(0), reserved: pc(0) });
    expect(await figuresOf(`sku=${sku}`)).toMatchObject({ onHand: pc(10), reserved: pc(4) });
  });

  it('refuses an instant in the future, a malformed one, and at together with places', async () => {
    const sku = await givenProduct(ctx.app);
    const future = new Date(Date.now() + 60_000).toISOString();
    expectValidationError(await stockOf(`sku=${sku}&at=${future}`), [['at', `must not be in the future: ${future}`]]);
    expectValidationError(await stockOf(`sku=${sku}&at=yesterday`), [
      ['at', 'must be an ISO 8601 datetime with an offset'],
    ]);
    expectValidationError(await stockOf(`sku=${sku}&at=2020-01-01T00:00:00Z&by=location`), [
      ['by', 'cannot be combined with at: the ledger keeps no past places of TransportUnits'],
    ]);
  });

  it('answers 410 for an instant before the kept ledger', async () => {
    const sku = await givenProduct(ctx.app);
    await ctx.db.pool.query(`UPDATE ledger_horizon SET kept_since = '2024-03-01T00:00:00Z'`);
    try {
      expectApiDeclined(await stockOf(`sku=${sku}&at=2024-02-29T23:59:59.999Z`), {
        status: 410,
        message:
          'Stock at [2024-02-29T23:59:59.999Z] cannot be told: the ledger is kept from [2024-03-01T00:00:00.000Z] on',
        messageKey: 'owms.wms.inv.stock.historyExpired',
        obj: ['2024-02-29T23:59:59.999Z'],
        class: 'String',
      });
      expect((await stockOf(`sku=${sku}&at=2024-03-01T00:00:00Z`)).status).toBe(200);
    } finally {
      await ctx.db.pool.query('UPDATE ledger_horizon SET kept_since = NULL');
    }
  });
});

describe('GET /v1/stock?sku= with bad input', () => {
  it('answers the Product 404 for an unknown SKU', async () => {
    const sku = unique('NOPE');
    expectApiDeclined(await stockOf(`sku=${sku}`), {
      status: 404,
      message: `No Product with SKU [${sku}] exists`,
      messageKey: 'not.found',
    });
  });

  it.each([
    ['by=place', 'by', 'must be locationGroup or location'],
    ['sourceLocationGroupNames=NO-SUCH-GROUP', 'sourceLocationGroupNames', 'names no LocationGroup: NO-SUCH-GROUP'],
    ['limit=10', 'limit', 'pages the list of every Product and is not taken with sku'],
  ])('answers 400 naming the parameter for %s', async (query, name, message) => {
    const sku = await givenProduct(ctx.app);
    expectValidationError(await stockOf(`sku=${sku}&${query}`), [[name, message]]);
  });

  it('answers 400 for a parameter it does not take', async () => {
    const response = await stockOf('sku=X&skus=Y');
    expect(response.status).toBe(400);
    expect((response.body as { obj: string[] }).obj).toEqual(['skus']);
  });
});

describe('GET /v1/stock', () => {
  it('lists every Product in SKU order, zeros included, a page at a time with a next link', async () => {
    const prefix = unique('LIST');
    const skus = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
    for (const sku of skus) await givenProduct(ctx.app, { sku });
    await givenUnitsIn(ctx.app, tuA, unique('L'), `${prefix}-b`, [{ quantity: pc(3) }]);
    const all: { sku: string }[] = [];
    let path: string | undefined = '/v1/stock?limit=2';
    let pages = 0;
    while (path) {
      const response = await call(ctx.app, 'get', path);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(JSON_UTF8);
      all.push(...(response.body as { sku: string }[]));
      const next = /^<([^>]+)>; rel="next"$/.exec((response.headers.link as string | undefined) ?? '')?.[1];
      path = next === undefined ? undefined : next.slice(`http://${HOST}`.length);
      pages += 1;
    }
    expect(pages).toBeGreaterThan(1);
    const ours = all.filter((item) => item.sku.startsWith(prefix));
    expect(ours).toEqual([
      {
        sku: `${prefix}-a`,
        onHand: pc(0),
        reserved: pc(0),
        available: pc(0),
        feedCursor: expect.stringMatching(FEED_CURSOR),
      },
      {
        sku: `${prefix}-b`,
        onHand: pc(3),
        reserved: pc(0),
        available: pc(3),
        feedCursor: expect.stringMatching(FEED_CURSOR),
      },
      {
        sku: `${prefix}-c`,
        onHand: pc(0),
        reserved: pc(0),
        available: pc(0),
        feedCursor: expect.stringMatching(FEED_CURSOR),
      },
    ]);
    const { rows } = await ctx.db.pool.query<{ sku: string }>('SELECT sku FROM product ORDER BY sku');
    expect(all.map((item) => item.sku)).toEqual(rows.map((row) => row.sku));
  });

  it('answers a HAL page with the Products embedded and the next page linked', async () => {
    const response = await call(ctx.app, 'get', '/v1/stock?limit=1').set('Accept', 'application/hal+json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    const body = response.body as {
      _embedded: { stock: { sku: string; _links: unknown }[] };
      _links: Record<string, { href: string }>;
    };
    expect(body._embedded.stock).toHaveLength(1);
    const sku = body._embedded.stock[0]!.sku;
    expect(body._embedded.stock[0]!._links).toEqual({
      self: { href: `http://${HOST}/v1/stock?sku=${encodeURIComponent(sku)}` },
    });
    expect(body._links.self).toEqual({ href: `http://${HOST}/v1/stock?limit=1` });
    expect(body._links.next!.href).toBe(
      `http://${HOST}/v1/stock?limit=1&after=${Buffer.from(sku).toString('base64url')}`,
    );
    expect(response.headers.link).toBe(`<${body._links.next!.href}>; rel="next"`);
  });

  it.each([
    ['limit=0', 'limit', 'Too small: expected number to be >=1'],
    ['limit=1001', 'limit', 'Too big: expected number to be <=1000'],
    ['after=not%20a%20cursor', 'after', 'must be the cursor of a next link'],
    ['by=location', 'by', 'is taken only together with sku'],
    ['at=2020-01-01T00:00:00Z', 'at', 'is taken only together with sku'],
  ])('answers 400 naming the parameter for %s', async (query, name, message) => {
    expectValidationError(await call(ctx.app, 'get', `/v1/stock?${query}`), [[name, message]]);
  });
});
