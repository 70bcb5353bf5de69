import type { Request, Response } from 'express';
import { XMLBuilder } from 'fast-xml-parser';
import type { ZodType } from 'zod';
import { z } from '../openapi/zod.js';
import { linksSchema, linkTo, type Link } from './links.js';
import { INDEX_RESOURCE, isXmlType, XML_TYPES } from './media-types.js';
import { sendJson } from './respond.js';
import type { Routes } from './routing.js';

type LinkSpec = readonly [rel: string, path: string, method?: string];

const ROOT_LINKS: readonly LinkSpec[] = [
  ['product-index', '/v1/products/index'],
  ['load-unit-index', '/v1/load-units/index'],
  ['packaging-unit-index', '/v1/packaging-units/index'],
  ['events-index', '/v1/events/index'],
  ['reservations-index', '/allocation/reservations/index'],
];

// Spec part 4: product links carry only href; load-unit and packaging-unit links also the HTTP method.
const PRODUCT_LINKS: readonly LinkSpec[] = [
  ['products-findall', '/v1/products'],
  ['products-findbysku', '/v1/products?sku={sku}'],
  ['products-findbyspkey', '/v1/products/{pKey}'],
  ['products-findbyskuanduom', '/v1/products?sku={sku}&uom={uom}'],
  ['products-create', '/v1/products'],
  ['products-update', '/v1/products'],
  ['products-delete', '/v1/products/{pKey}'],
  ['stock-findbysku', '/v1/stock?sku={sku}'],
  ['stock-findall', '/v1/stock'],
];

const LOAD_UNIT_LINKS: readonly LinkSpec[] = [
  ['lu-divide', '/v1/transport-unit', 'POST'],
  ['lu-findbypkey', '/v1/load-units/{pKey}', 'GET'],
  ['lu-findpuinlu', '/v1/load-units/{pKey}/packaging-units', 'GET'],
  ['lu-putproductinto', '/v1/load-units/{pKey}', 'PUT'],
];

const ON_LOAD_UNIT = '/v1/transport-units/{transportUnitBK}/load-units/{luPos}/packaging-units';
const PACKAGING_UNIT_LINKS: readonly LinkSpec[] = [
  ['packaging-units-create', ON_LOAD_UNIT, 'POST'],
  ['packaging-units-createonlocation', '/v1/packaging-units', 'POST'],
  ['packaging-units-findbypkey', '/v1/packaging-units/{pKey}', 'GET'],
  ['packaging-units-findontu', '/v2/transport-units/{transportUnitBK}/load-units/packaging-units', 'GET'],
  ['packaging-units-findontuandlu', ON_LOAD_UNIT, 'GET'],
  [
    'packaging-units-findforproduct',
    '/v1/packaging-units?sku={sku}&amount={amount}&sortDirection={sortDirection}&sortProperty={sortProperty}',
    'GET',
  ],
  [
    'packaging-units-findforproductinlg',
    '/v1/packaging-units?productPKey={productPKey}&locationGroupName={locationGroupName}&sortDirection={sortDirection}&sortProperty={sortProperty}',
    'GET',
  ],
  ['packaging-units-update', '/v1/packaging-units/{pKey}', 'PUT'],
  ['packaging-units-movebetweenlocations', '/v1/packaging-units/move-between-locations', 'PUT'],
  ['packaging-units-movefromlocationtoloadunit', '/v1/packaging-units/move-to-load-unit', 'PUT'],
  ['packaging-units-movepuquantity', ON_LOAD_UNIT, 'PUT'],
  ['packaging-units-deleteonlocation', '/v1/packaging-units', 'DELETE'],
  ['packaging-units-deletebypkey', '/v1/packaging-units/{pKey}', 'DELETE'],
  ['packaging-units-releasepu', '/v1/packaging-units/{pKey}/release', 'POST'],
  ['packaging-units-reportproblemforpuinlu', `${ON_LOAD_UNIT}/failures`, 'POST'],
];

const EVENT_LINKS: readonly LinkSpec[] = [
  ['events-feed', '/v1/events?after={cursor}&limit={limit}&wait={wait}', 'GET'],
];

const RESERVATION = '/allocation/reservations/{reservationId}';
const RESERVATION_LINKS: readonly LinkSpec[] = [
  ['allocate', '/allocation/transport-units', 'POST'],
  ['reservations-findall', '/allocation/reservations?sku={sku}&externalRef={externalRef}&state={state}', 'GET'],
  ['reservations-findbyid', RESERVATION, 'GET'],
  ['reservations-pick', `${RESERVATION}/picks`, 'POST'],
  ['reservations-issue', `${RESERVATION}/issue`, 'POST'],
  ['release-reservation', RESERVATION, 'DELETE'],
];

const xml = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  format: true,
  suppressEmptyNode: true,
  // `templated="true"`: an attribute without a value is not well-formed XML.
  suppressBooleanAttributes: false,
});

/** HAL+XML (draft-michaud-xml-hal): a `resource` element with one `link` element per relation. */
function toXml(selfHref: string, links: Record<string, Link>): string {
  const linkElements = Object.entries(links)
    .filter(([rel]) => rel !== 'self')
    .map(([rel, link]) => ({
      '@rel': rel,
      '@href': link.href,
      ...(link.type ? { '@type': link.type } : {}),
      ...(link.templated ? { '@templated': 'true' } : {}),
    }));
  return `<?xml version="1.0" encoding="UTF-8"?>\n${xml.build({ resource: { '@href': selfHref, link: linkElements } })}`;
}

function indexHandler(selfPath: string, specs: readonly LinkSpec[]) {
  return (req: Request, res: Response): void => {
    const links: Record<string, Link> = {};
    for (const [rel, path, method] of specs) links[rel] = linkTo(req, path, method);
    links.self = linkTo(req, selfPath);
    if (isXmlType(req.mediaType)) {
      res
        .status(200)
        .type(req.mediaType ?? 'application/xml')
        .send(toXml(links.self.href, links));
      return;
    }
    sendJson(res, 200, { _links: links });
  };
}

/** The JSON forms (HAL and plain): `_links` with each relation of the index and `self`. */
function indexSchema(name: string, specs: readonly LinkSpec[]): ZodType {
  return z
    .object({ _links: linksSchema([...specs.map(([rel]) => rel), 'self']) })
    .strict()
    .openapi(name);
}

const xmlAttribute = { xml: { attribute: true } };

/** The XML form `toXml` writes: `<resource href><link rel href type? templated?/>…</resource>`. */
const indexXmlSchema = z
  .object({
    href: z.string().openapi(xmlAttribute),
    link: z.array(
      z
        .object({
          rel: z.string().openapi(xmlAttribute),
          href: z.string().openapi(xmlAttribute),
          type: z.string().optional().openapi(xmlAttribute),
          templated: z.boolean().optional().openapi(xmlAttribute),
        })
        .strict(),
    ),
  })
  .strict()
  .openapi('IndexXml', { xml: { name: 'resource' }, description: 'An index as HAL+XML (draft-michaud-xml-hal)' });

const JSON_FORMS = INDEX_RESOURCE.filter((type) => !isXmlType(type));

interface IndexResource {
  readonly path: string;
  readonly links: readonly LinkSpec[];
  /** The rel that leads to it from `/index`. */
  readonly operationId: string;
  readonly schemaName: string;
  readonly summary: string;
}

const INDEXES: readonly IndexResource[] = [
  {
    path: '/index',
    links: ROOT_LINKS,
    operationId: 'index',
    schemaName: 'Index',
    summary: 'Entry point: links to the index of each resource family',
  },
  {
    path: '/v1/products/index',
    links: PRODUCT_LINKS,
    operationId: 'product-index',
    schemaName: 'ProductIndex',
    summary: 'Links to every Product operation',
  },
  {
    path: '/v1/load-units/index',
    links: LOAD_UNIT_LINKS,
    operationId: 'load-unit-index',
    schemaName: 'LoadUnitIndex',
    summary: 'Links to every LoadUnit operation',
  },
  {
    path: '/v1/packaging-units/index',
    links: PACKAGING_UNIT_LINKS,
    operationId: 'packaging-unit-index',
    schemaName: 'PackagingUnitIndex',
    summary: 'Links to every PackagingUnit operation',
  },
  {
    path: '/v1/events/index',
    links: EVENT_LINKS,
    operationId: 'events-index',
    schemaName: 'EventsIndex',
    summary: 'Links to the change feed of stock events',
  },
  {
    path: '/allocation/reservations/index',
    links: RESERVATION_LINKS,
    operationId: 'reservations-index',
    schemaName: 'ReservationsIndex',
    summary: 'Links to allocation and the life of a reservation (D32)',
  },
];

export function addIndexRoutes(routes: Routes): void {
  for (const { path, links, operationId, schemaName, summary } of INDEXES) {
    const schema = indexSchema(schemaName, links);
    routes.add({
      method: 'GET',
      path,
      produces: INDEX_RESOURCE,
      handler: indexHandler(path, links),
      doc: {
        operationId,
        tags: ['Index'],
        summary,
        public: path === '/index',
        responses: {
          200: {
            description: 'The links; XML only when application/xml, application/hal+xml or text/xml is named (D7)',
            content: {
              ...Object.fromEntries(JSON_FORMS.map((type) => [type, schema])),
              ...Object.fromEntries(XML_TYPES.map((type) => [type, indexXmlSchema])),
            },
          },
        },
      },
    });
  }
}
