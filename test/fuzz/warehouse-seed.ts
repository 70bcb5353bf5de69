import type { TestContext } from '../support/app.js';
import { aQuantity } from '../support/builders.js';
import {
  allocate,
  givenDivided,
  givenGroups,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  givenUnitsOnLocation,
  pc,
} from '../support/stock-api.js';
import type { KeyPool } from './known-keys.js';

/**
 * A small warehouse, so that valid requests meet real data: groups WH > ZONE-A/ZONE-B, four Locations,
 * Products by piece and by weight (one unused, one with units), a TransportUnit divided into four LoadUnits,
 * one that is not, units in LoadUnits and on Locations, and one reservation. Every key goes into the pool.
 */
export async function seedWarehouse(ctx: TestContext, keys: KeyPool): Promise<void> {
  const app = ctx.app;
  const groups = ['FZ-WH', 'FZ-ZONE-A', 'FZ-ZONE-B'];
  await givenGroups(
    app,
    { name: 'FZ-WH' },
    { name: 'FZ-ZONE-A', parent: 'FZ-WH' },
    { name: 'FZ-ZONE-B', parent: 'FZ-WH' },
  );
  const locations = [
    await givenLocation(app, { locationGroupName: 'FZ-ZONE-A' }),
    await givenLocation(app, { locationGroupName: 'FZ-ZONE-A' }),
    await givenLocation(app, { locationGroupName: 'FZ-ZONE-B' }),
    await givenLocation(app, { locationGroupName: 'FZ-WH' }),
  ];
  const bySku = {
    piece: await givenProduct(app, { units: [{ quantity: aQuantity(1, 'DOZ') }] }),
    dozen: await givenProduct(app, { baseUnit: aQuantity(1, 'DOZ') }),
    weight: await givenProduct(app, { baseUnit: aQuantity(1, 'KG') }),
    unused: await givenProduct(app),
  };
  const tuDivided = await givenTransportUnitOn(app, locations[0]!.locationId);
  await givenDivided(app, tuDivided, 4);
  const tuWhole = await givenTransportUnitOn(app, locations[1]!.locationId);

  const units = [
    ...(await givenUnitsIn(app, tuDivided, '1', bySku.piece, [{ quantity: pc(24) }, { quantity: pc(10) }])),
    ...(await givenUnitsIn(app, tuDivided, '2', bySku.piece, [{ quantity: aQuantity(2, 'DOZ') }])),
    ...(await givenUnitsIn(app, tuWhole, '1', bySku.weight, [{ quantity: aQuantity(1500, 'G') }])),
    ...(await givenUnitsOnLocation(app, locations[2]!.locationId, bySku.piece, [{ quantity: pc(7) }])),
    ...(await givenUnitsOnLocation(app, locations[3]!.locationId, bySku.dozen, [{ quantity: aQuantity(3, 'DOZ') }])),
  ];
  const reserved = await allocate(app, { sku: bySku.piece, qty: pc(5) });
  if (reserved.status !== 200) throw new Error(`seed allocation answered ${reserved.status} ${reserved.text}`);

  for (const sku of Object.values(bySku)) keys.add('sku', sku);
  for (const name of groups) keys.add('groupName', name);
  // First the Location holding units of the piece Product: index 0 of every kind belongs together.
  for (const location of [locations[2]!, locations[0]!, locations[1]!, locations[3]!]) {
    keys.add('locationId', location.locationId);
    keys.add('erpCode', location.erpCode);
  }
  for (const bk of [tuDivided, tuWhole]) keys.add('transportUnitBK', bk);
  for (const position of ['1', '2', '3', '4']) keys.add('luPos', position);
  for (const type of ['BOX', 'PALLET', 'EURO']) keys.add('typeName', type);
  for (const unit of units) keys.add('unitPKey', unit.pKey);
  keys.harvest(reserved.body, 'unitPKey');

  const products = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM product ORDER BY id');
  for (const row of products.rows) keys.add('productPKey', row.p_key);
  const loadUnits = await ctx.db.pool.query<{ p_key: string }>('SELECT p_key FROM load_unit ORDER BY id');
  for (const row of loadUnits.rows) keys.add('loadUnitPKey', row.p_key);
  if (keys.all('reservationId').length === 0) throw new Error('the seed allocation reserved nothing');
}
