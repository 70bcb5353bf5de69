import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { expectApiDeclined, expectValidationError } from '../support/api-errors.js';
import { useTestApp } from '../support/app.js';
import { aQuantity, type Json } from '../support/builders.js';
import { expectServerDeclined, JSON_UTF8 } from '../support/http.js';
import { givenLocation, givenProduct, loadUnitPKey, STOCK_HOST, stockApi, uniqueKey } from '../support/stock.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();
const api = stockApi(ctx);

const ndjson = (lines: readonly unknown[]): string => lines.map((line) => JSON.stringify(line)).join('\n');

function intake(body: string, requestId: string): request.Test {
  return request(ctx.app)
    .post('/v1/packaging-units')
    .set('Authorization', bearer())
    .set('Host', STOCK_HOST)
    .set('Content-Type', 'application/x-ndjson')
    .set('X-Request-Id', requestId)
    .send(body);
}

/** The identifiers of one run of the sample, fresh each time, so two runs can be compared once they are named. */
interface Names {
  readonly piece: string;
  readonly weight: string;
  readonly tus: readonly [string, string, string];
  readonly location: string;
}

async function givenNames(): Promise<Names> {
  return {
    piece: (await givenProduct(ctx)).sku,
    weight: (await givenProduct(ctx, { baseUnit: aQuantity(1, 'KG') })).sku,
    tus: [uniqueKey('TU'), uniqueKey('TU'), uniqueKey('TU')],
    location: (await givenLocation(ctx)).locationId,
  };
}

/** Units across three TransportUnits (two LoadUnits on one) and on a Location, with optional fields. */
function sample(n: Names): Json[] {
  return [
    {
      transportUnitBK: n.tus[0],
      luPos: '1',
      loadUnitType: 'PALLET',
      product: { sku: n.piece },
      quantity: aQuantity(3),
    },
    {
      transportUnitBK: n.tus[0],
      luPos: '1',
      product: { sku: n.piece },
      quantity: aQuantity(2, 'DOZ'),
      serialNumber: 'S-1',
      expiresAt: '2031-05-01T10:00:00.000Z',
      labels: ['a', 'b'],
    },
    {
      transportUnitBK: n.tus[0],
      luPos: '2',
      loadUnitType: 'BOX',
      product: { sku: n.weight },
      quantity: aQuantity(1.5, 'KG'),
    },
    {
      transportUnitBK: n.tus[1],
      luPos: '1',
      loadUnitType: 'BOX',
      product: { sku: n.weight },
      quantity: aQuantity(250, 'G'),
      weight: aQuantity(0.3, 'KG'),
      details: { lot: 'L7' },
    },
    { actualLocation: { locationId: n.location }, product: { sku: n.piece }, quantity: aQuantity(7) },
    { transportUnitBK: n.tus[2], luPos: 'A', loadUnitType: 'BOX', product: { sku: n.piece }, quantity: aQuantity(1) },
  ];
}

/** The same lines created one by one through the single creates, each request with its own id. */
async function createOneByOne(lines: readonly Json[]): Promise<void> {
  for (const line of lines) {
    const { transportUnitBK, luPos, loadUnitType, ...unit } = line;
    const response =
      transportUnitBK === undefined
        ? await api.post('/v1/packaging-units', unit)
        : await api.post(
            `/v1/transport-units/${String(transportUnitBK)}/load-units/${String(luPos)}/packaging-units` +
              (loadUnitType === undefined ? '' : `?loadUnitType=${String(loadUnitType)}`),
            [unit],
          );
    expect(response.status, response.text).toBe(201);
  }
}

const UUID_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP_TEXT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;

/** A value with the run's identifiers named by role, keys and instants replaced: comparable across runs. */
function named(value: unknown, n: Names): string {
  let text = JSON.stringify(value).replace(UUID_TEXT, '<uuid>').replace(TIMESTAMP_TEXT, '<time>');
  const roles: [string, string][] = [
    [n.piece, '<piece>'],
    [n.weight, '<weight>'],
    [n.tus[0], '<tu0>'],
    [n.tus[1], '<tu1>'],
    [n.tus[2], '<tu2>'],
    [n.location, '<location>'],
  ];
  for (const [actual, role] of roles) text = text.split(actual).join(role);
  return text;
}

/** What the run stored and wrote, named: units, ledger rows and events of its Products, and their stock levels. */
async function outcome(n: Names): Promise<Record<string, string[]>> {
  const skus = [n.piece, n.weight];
  const units = await ctx.db.pool.query(
    `SELECT pu.qty_magnitude::text, pu.qty_code, pu.state, pu.serial_number, pu.expires_at, pu.labels, pu.details,
            pu.weight_magnitude::text, pu.weight_code, pu.ol, p.sku, lu.physical_position, lu.load_unit_type,
            lu.product_id = p.id AS assigned, lu.ol AS lu_ol, tu.bk, l.location_id
       FROM packaging_unit pu JOIN product p ON p.id = pu.product_id
            LEFT JOIN load_unit lu ON lu.id = pu.load_unit_id LEFT JOIN transport_unit tu ON tu.id = lu.transport_unit_id
            LEFT JOIN location l ON l.id = pu.location_id
      WHERE p.sku = ANY($1) ORDER BY pu.id`,
    [skus],
  );
  const ledger = await ctx.db.pool.query(
    `SELECT m.kind, m.base_code, m.qty_before::text, m.qty_after::text, m.reserved_before::text,
            m.reserved_after::text, m.from_ref, m.to_ref, m.actor, p.sku
       FROM stock_movement m JOIN product p ON p.id = m.product_id WHERE p.sku = ANY($1) ORDER BY m.id`,
    [skus],
  );
  const events = await ctx.db.pool.query(
    `SELECT e.type, e.resource FROM event_outbox e
      WHERE e.type LIKE 'pu.%' AND e.resource #>> '{product,sku}' = ANY($1)
         OR e.type LIKE 'lu.%' AND e.resource #>> '{product,sku}' = ANY($1)
      ORDER BY e.seq`,
    [skus],
  );
  const stock: string[] = [];
  for (const sku of skus) {
    const response = await api.get(`/v1/stock?sku=${sku}`);
    expect(response.status).toBe(200);
    // When and through which event the figures were read differs between the two sets; the figures must not.
    const { asOf, feedCursor, ...figures } = response.body as Json;
    expect(asOf).toEqual(expect.any(String));
    expect(feedCursor).toEqual(expect.any(String));
    stock.push(named(figures, n));
  }
  return {
    units: units.rows.map((row) => named(row, n)),
    ledger: ledger.rows.map((row) => named(row, n)),
    // One by one each LoadUnit's event precedes its unit's; the intake writes the LoadUnits' first (D35).
    events: events.rows.map((row) => named(row, n)).sort(),
    stock,
  };
}

async function tableCounts(): Promise<Record<string, number>> {
  const { rows } = await ctx.db.pool.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM packaging_unit) AS units, (SELECT count(*)::int FROM load_unit) AS load_units,
            (SELECT count(*)::int FROM transport_unit) AS transport_units,
            (SELECT count(*)::int FROM stock_movement) AS ledger, (SELECT count(*)::int FROM event_outbox) AS events`,
  );
  return rows[0]!;
}

describe('POST /v1/packaging-units as NDJSON: stock intake (D35)', () => {
  it('stores units across several TransportUnits exactly as creating them one by one: units, ledger, events, stock', async () => {
    const oneByOne = await givenNames();
    await createOneByOne(sample(oneByOne));
    const taken = await givenNames();

    const response = await intake(`${ndjson(sample(taken))}\n`, uniqueKey('intake'));

    expect(response.status, response.text).toBe(201);
    expect(response.headers['content-type']).toBe(JSON_UTF8);
    expect(response.body).toEqual({ created: 6 });
    expect(response.headers.location).toBeUndefined();
    const expected = await outcome(oneByOne);
    const actual = await outcome(taken);
    expect(actual.units).toHaveLength(6);
    expect(actual.ledger).toHaveLength(6);
    expect(actual.events).toHaveLength(6 + 4);
    expect(actual).toEqual(expected);
  });

  it('writes the events of the LoadUnits first, then one pu.event.created per unit in line order, under the request id', async () => {
    const n = await givenNames();
    const requestId = uniqueKey('intake-order');

    expect((await intake(ndjson(sample(n)), requestId)).status).toBe(201);

    const { rows } = await ctx.db.pool.query<{ type: string; sku: string; serial: string | null }>(
      `SELECT type, resource #>> '{product,sku}' AS sku, resource ->> 'serialNumber' AS serial
         FROM event_outbox WHERE request_id = $1 ORDER BY seq`,
      [requestId],
    );
    expect(rows.map((row) => [row.type, row.sku])).toEqual([
      ['lu.event.created', n.piece],
      ['lu.event.created', n.weight],
      ['lu.event.created', n.weight],
      ['lu.event.created', n.piece],
      ...sample(n).map((line) => ['pu.event.created', (line.product as { sku: string }).sku]),
    ]);
    expect(rows[5]!.serial).toBe('S-1');
  });

  it('puts units into an existing LoadUnit of the same Product with no LoadUnit event, and assigns a bare one (lu.event.changed)', async () => {
    const sku = (await givenProduct(ctx)).sku;
    const bk = uniqueKey('TU');
    expect(
      (
        await api.post(`/v1/transport-units/${bk}/load-units/1/packaging-units?loadUnitType=BOX`, [
          { product: { sku }, quantity: aQuantity(1) },
        ])
      ).status,
    ).toBe(201);
    expect(
      (await api.post('/v1/transport-unit', { transportUnitBK: uniqueKey('TU'), parts: 1, loadUnitType: 'BOX' }))
        .status,
    ).toBe(201);
    const bare = uniqueKey('TU');
    expect(
      (await api.post('/v1/transport-unit', { transportUnitBK: bare, parts: 1, loadUnitType: 'BOX' })).status,
    ).toBe(201);
    const requestId = uniqueKey('intake-existing');

    const response = await intake(
      ndjson([
        { transportUnitBK: bk, luPos: '1', product: { sku }, quantity: aQuantity(2) },
        { transportUnitBK: bare, luPos: '1', product: { sku }, quantity: aQuantity(4) },
      ]),
      requestId,
    );

    expect(response.status, response.text).toBe(201);
    const { rows } = await ctx.db.pool.query<{ type: string; key: string }>(
      'SELECT type, resource_key AS key FROM event_outbox WHERE request_id = $1 ORDER BY seq',
      [requestId],
    );
    expect(rows.map((row) => row.type)).toEqual(['lu.event.changed', 'pu.event.created', 'pu.event.created']);
    expect(rows[0]!.key).toBe(await loadUnitPKey(ctx.db.pool, bare, '1'));
    const stock = await api.get(`/v1/stock?sku=${sku}`);
    expect(stock.body.onHand).toEqual(aQuantity(7));
  });

  it('answers a bad line with 400 naming it, counted from 1 with blank lines, and stores nothing', async () => {
    const n = await givenNames();
    const lines = sample(n);
    const before = await tableCounts();

    const response = await intake(
      `${ndjson(lines.slice(0, 2))}\n\n${JSON.stringify({ ...lines[2], quantity: aQuantity(0, 'KG') })}\n${ndjson(lines.slice(3))}`,
      uniqueKey('intake-bad'),
    );

    expectValidationError(response, [['line 4: quantity.magnitude', 'must be greater than 0']]);
    expect(await tableCounts()).toEqual(before);
  });

  it('answers malformed JSON on a line with 400 naming the line, storing nothing', async () => {
    const n = await givenNames();
    const before = await tableCounts();

    const response = await intake(`${ndjson(sample(n).slice(0, 2))}\n{"product":`, uniqueKey('intake-malformed'));

    expectServerDeclined(response, {
      status: 400,
      error: 'Bad Request',
      exception: 'HttpMessageNotReadableException',
      message: /^Request body is not readable: line 3: malformed JSON \(.+\)$/,
      path: '/v1/packaging-units',
    });
    expect(await tableCounts()).toEqual(before);
  });

  it('answers an unknown SKU with the 404 not.found of the single create, storing nothing', async () => {
    const n = await givenNames();
    const before = await tableCounts();

    const response = await intake(
      ndjson([
        ...sample(n),
        { actualLocation: { locationId: n.location }, product: { sku: 'NO-SUCH-SKU' }, quantity: aQuantity(1) },
      ]),
      uniqueKey('intake-sku'),
    );

    expectApiDeclined(response, {
      status: 404,
      message: 'No Product with SKU [NO-SUCH-SKU] exists',
      messageKey: 'not.found',
    });
    expect(await tableCounts()).toEqual(before);
  });

  it('answers an unknown Location with the 404 of D14, storing nothing', async () => {
    const n = await givenNames();
    const before = await tableCounts();

    const response = await intake(
      ndjson([
        ...sample(n),
        { actualLocation: { locationId: 'NO-SUCH-LOC' }, product: { sku: n.piece }, quantity: aQuantity(1) },
      ]),
      uniqueKey('intake-location'),
    );

    expectApiDeclined(response, {
      status: 404,
      message: 'Location with locationId [NO-SUCH-LOC] does not exist',
      messageKey: 'owms.wms.inv.loc.idNotExists',
      obj: ['NO-SUCH-LOC'],
      class: 'String',
    });
    expect(await tableCounts()).toEqual(before);
  });

  it('answers a quantity of another kind than its Product with 400 naming the line', async () => {
    const n = await givenNames();

    const response = await intake(
      ndjson([{ actualLocation: { locationId: n.location }, product: { sku: n.weight }, quantity: aQuantity(1) }]),
      uniqueKey('intake-kind'),
    );

    expectValidationError(response, [['line 1: quantity', "must be a Weight quantity like the Product's baseUnit"]]);
  });

  it('refuses a second Product in one LoadUnit with the 400 of D17, storing nothing (not even the LoadUnit)', async () => {
    const n = await givenNames();
    const before = await tableCounts();

    const response = await intake(
      ndjson([
        {
          transportUnitBK: n.tus[0],
          luPos: '1',
          loadUnitType: 'BOX',
          product: { sku: n.piece },
          quantity: aQuantity(1),
        },
        { transportUnitBK: n.tus[0], luPos: '1', product: { sku: n.weight }, quantity: aQuantity(1, 'KG') },
      ]),
      uniqueKey('intake-d17'),
    );

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'owms.wms.inv.lu.alreadyAssigned', httpStatus: '400' });
    // D38: the LoadUnit the rollback removed is named as the client sent it, not by a pKey that no longer exists.
    expect(response.body.message).toBe(
      `line 2: the LoadUnit at position [1] on TransportUnit [${n.tus[0]}] already carries another Product than [${n.weight}]`,
    );
    expect(response.body.obj).toEqual(['line 2', n.tus[0], '1', n.weight]);
    expect(await tableCounts()).toEqual(before);
  });

  it('refuses a Product other than the one an existing LoadUnit is assigned to (D17)', async () => {
    const n = await givenNames();
    await createOneByOne(sample(n).slice(0, 1));

    const response = await intake(
      ndjson([{ transportUnitBK: n.tus[0], luPos: '1', product: { sku: n.weight }, quantity: aQuantity(1, 'KG') }]),
      uniqueKey('intake-d17-existing'),
    );

    expectApiDeclined(response, {
      status: 400,
      message: expect.stringContaining(`another Product than [${n.weight}]`),
      messageKey: 'owms.wms.inv.lu.alreadyAssigned',
      obj: [await loadUnitPKey(ctx.db.pool, n.tus[0], '1'), n.weight],
      class: 'String',
    });
  });

  it('answers a LoadUnit to create whose first line has no loadUnitType with the 400 of the single create', async () => {
    const n = await givenNames();
    const before = await tableCounts();

    const response = await intake(
      ndjson([
        { transportUnitBK: n.tus[0], luPos: '1', product: { sku: n.piece }, quantity: aQuantity(1) },
        {
          transportUnitBK: n.tus[0],
          luPos: '1',
          loadUnitType: 'BOX',
          product: { sku: n.piece },
          quantity: aQuantity(1),
        },
      ]),
      uniqueKey('intake-type'),
    );

    expectApiDeclined(response, {
      status: 400,
      message: expect.stringContaining('no loadUnitType was given'),
      messageKey: 'owms.wms.inv.pu.loadUnitTypeMissing',
      obj: ['1', n.tus[0]],
      class: 'String',
    });
    expect(await tableCounts()).toEqual(before);
  });

  it('refuses a line naming both a LoadUnit and a Location, and a body without units', async () => {
    const n = await givenNames();
    const both = {
      transportUnitBK: n.tus[0],
      luPos: '1',
      actualLocation: { locationId: n.location },
      product: { sku: n.piece },
      quantity: aQuantity(1),
    };

    expectValidationError(await intake(ndjson([both]), uniqueKey('intake-both')), [
      ['line 1', 'give either transportUnitBK and luPos, or actualLocation'],
    ]);
    expectValidationError(await intake('\n\n', uniqueKey('intake-empty')), [
      ['body', 'must contain at least one PackagingUnit'],
    ]);
  });

  it('keeps the JSON form of the operation working beside it', async () => {
    const n = await givenNames();

    const response = await api.post('/v1/packaging-units', [
      { actualLocation: { locationId: n.location }, product: { sku: n.piece }, quantity: aQuantity(2) },
    ]);

    expect(response.status).toBe(201);
    expect(response.body).toHaveLength(1);
  });
});
