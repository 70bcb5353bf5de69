import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  allocate,
  call,
  expectStatus,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
} from '../support/stock-api.js';

/**
 * D39: no list answers fewer items than exist without saying so. Every GET of the served document whose answer is
 * a list is found here by its schema; each either pages (a bounded size parameter, `after`, and a `Link` header)
 * or is named below as unbounded by design, and each that pages is walked with a page size of 1.
 */
const ctx = useTestApp();

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; schema?: Schema }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: Schema }> }>;
}

/** Lists that answer everything they hold, with the reason they may. */
const UNBOUNDED_BY_DESIGN: Record<string, string> = {
  'packaging-units-findontuandlu': 'the units of one LoadUnit: no size parameter, read whole',
  'packaging-units-findontu-v1': 'the units on one TransportUnit: no size parameter, read whole',
  'packaging-units-findontu-v2': 'the units on one TransportUnit: no size parameter, read whole',
  'lu-findpuinlu': 'the units of one LoadUnit: no size parameter, read whole',
};

/** The feed carries its cursor in the body (`next`, D29), not in a Link header. */
const PAGED_BY_BODY_CURSOR = new Set(['events-feed']);

let document: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

function resolve(schema: Schema | undefined): Schema {
  const ref = schema?.$ref as string | undefined;
  return ref ? resolve(document.components.schemas[ref.split('/').pop()!]) : (schema ?? {});
}

function isList(schema: Schema | undefined): boolean {
  const resolved = resolve(schema);
  if (resolved.type === 'array') return true;
  if ((resolved.properties as Schema | undefined)?._embedded) return true;
  return ((resolved.anyOf ?? resolved.oneOf ?? []) as Schema[]).some(isList);
}

function listOperations(): { path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, operations]) => {
    const operation = operations.get;
    const content = operation?.responses['200']?.content ?? {};
    return operation && Object.values(content).some((media) => isList(media.schema)) ? [{ path, operation }] : [];
  });
}

/** The query parameter bounding the page, if any: the one with a declared maximum. */
function sizeParameter(operation: Operation): string | undefined {
  const bounded = (operation.parameters ?? []).filter((p) => p.in === 'query' && p.schema?.maximum !== undefined);
  return bounded.find((p) => p.name !== 'wait')?.name;
}

function itemsOf(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  const embedded = (body as { _embedded?: Record<string, unknown[]> })._embedded ?? {};
  return Object.values(embedded)[0] ?? [];
}

const fixture = { transportUnitBK: '', pKey: '', sku: '' };

beforeAll(async () => {
  document = (await call(ctx, 'get', '/v3/api-docs')).body as typeof document;
  fixture.sku = await givenProduct(ctx);
  await givenProduct(ctx);
  const { locationId } = await givenLocation(ctx);
  fixture.transportUnitBK = await givenTransportUnitOn(ctx, locationId);
  const [first] = await givenUnitsIn(ctx, fixture.transportUnitBK, '1', fixture.sku, [{ quantity: pc(5) }]);
  await givenUnitsIn(ctx, fixture.transportUnitBK, '2', fixture.sku, [{ quantity: pc(5) }]);
  fixture.pKey = first!.pKey;
  const moved = await call(ctx, 'put', `/v1/packaging-units/${fixture.pKey}`).send({ actualLocation: { locationId } });
  expectStatus(moved, 200, 'move a unit, for a second movement');
  expectStatus(await allocate(ctx, { sku: fixture.sku, qty: pc(1) }), 200, 'reserve one piece');
  expectStatus(await allocate(ctx, { sku: fixture.sku, qty: pc(1) }), 200, 'reserve another piece');
});

describe('every list of the OpenAPI document pages or is unbounded by design (D39)', () => {
  it('finds the lists and sorts each into paged, unbounded by design or paged by its body cursor', () => {
    const unsorted = listOperations()
      .map(({ operation }) => operation)
      .filter((operation) => !PAGED_BY_BODY_CURSOR.has(operation.operationId))
      .filter((operation) => !(operation.operationId in UNBOUNDED_BY_DESIGN))
      .filter((operation) => {
        const names = (operation.parameters ?? []).map((p) => p.name);
        const pages = sizeParameter(operation) !== undefined && names.includes('after');
        return !(pages && operation.responses['200']?.headers?.Link);
      });
    expect(unsorted.map((operation) => operation.operationId)).toEqual([]);
    expect(listOperations().length).toBeGreaterThanOrEqual(10);
  });

  it('declares no size bound on a list it calls unbounded', () => {
    for (const { operation } of listOperations()) {
      if (operation.operationId in UNBOUNDED_BY_DESIGN) expect(sizeParameter(operation)).toBeUndefined();
    }
  });

  it('walks each paged list a unit at a time: one item, a next link, then another item', async () => {
    const walked: string[] = [];
    for (const { path, operation } of listOperations()) {
      const size = sizeParameter(operation);
      if (size === undefined || PAGED_BY_BODY_CURSOR.has(operation.operationId)) continue;
      const filled = path.replace(/\{(\w+)\}/g, (_, name: keyof typeof fixture) => fixture[name]);
      const filters = operation.operationId === 'packaging-units-findforproduct' ? `sku=${fixture.sku}&` : '';
      const first = await call(ctx, 'get', `${filled}?${filters}${size}=1`);
      expect(first.status, operation.operationId).toBe(200);
      expect(itemsOf(first.body), operation.operationId).toHaveLength(1);
      const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1];
      expect(next, `${operation.operationId} links its next page`).toBeDefined();
      const second = await call(ctx, 'get', new URL(next!).pathname + new URL(next!).search);
      expect(second.status, operation.operationId).toBe(200);
      expect(itemsOf(second.body), operation.operationId).toHaveLength(1);
      expect(itemsOf(second.body), operation.operationId).not.toEqual(itemsOf(first.body));
      walked.push(operation.operationId);
    }
    expect(walked.sort()).toEqual([
      'lu-findontu',
      'packaging-units-findforproduct',
      'packaging-units-movements',
      'products-findall',
      'reservations-findall',
      'stock-find',
    ]);
  });

  it('pages the feed by the next cursor of its body', async () => {
    const first = await call(ctx, 'get', '/v1/events?limit=1');
    expect(first.status).toBe(200);
    const page = first.body as { events: unknown[]; next: string };
    expect(page.events).toHaveLength(1);
    const second = await call(ctx, 'get', `/v1/events?limit=1&after=${page.next}`);
    expect((second.body as { events: unknown[] }).events).toHaveLength(1);
    expect(second.body).not.toEqual(first.body);
  });
});
