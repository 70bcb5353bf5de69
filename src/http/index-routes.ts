import type { Request, Response } from 'express';
import { XMLBuilder } from 'fast-xml-parser';
import { href, type Link } from './links.js';
import { INDEX_RESOURCE, isXmlType } from './media-types.js';
import { sendJson } from './respond.js';
import type { Routes } from './routing.js';

type LinkSpec = readonly [rel: string, path: string, method?: string];

const ROOT_LINKS: readonly LinkSpec[] = [
  ['product-index', '/v1/products/index'],
  ['load-unit-index', '/v1/load-units/index'],
  ['packaging-unit-index', '/v1/packaging-units/index'],
  ['events-index', '/v1/events/index'],
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

const xml = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  format: true,
  suppressEmptyNode: true,
});

/** HAL+XML (draft-michaud-xml-hal): a `resource` element with one `link` element per relation. */
function toXml(selfHref: string, links: Record<string, Link>): string {
  const linkElements = Object.entries(links)
    .filter(([rel]) => rel !== 'self')
    .map(([rel, link]) => ({ '@rel': rel, '@href': link.href, ...(link.type ? { '@type': link.type } : {}) }));
  return `<?xml version="1.0" encoding="UTF-8"?>\n${xml.build({ resource: { '@href': selfHref, link: linkElements } })}`;
}

function indexHandler(selfPath: string, specs: readonly LinkSpec[]) {
  return (req: Request, res: Response): void => {
    const links: Record<string, Link> = {};
    for (const [rel, path, method] of specs)
      links[rel] = method ? { href: href(req, path), type: method } : { href: href(req, path) };
    links.self = { href: href(req, selfPath) };
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

export function addIndexRoutes(routes: Routes): void {
  const indexes: [string, readonly LinkSpec[], string][] = [
    ['/index', ROOT_LINKS, 'Entry point: links to the index of each resource family'],
    ['/v1/products/index', PRODUCT_LINKS, 'Links to every Product operation'],
    ['/v1/load-units/index', LOAD_UNIT_LINKS, 'Links to every LoadUnit operation'],
    ['/v1/packaging-units/index', PACKAGING_UNIT_LINKS, 'Links to every PackagingUnit operation'],
    ['/v1/events/index', EVENT_LINKS, 'Links to the change feed of stock events'],
  ];
  for (const [path, specs, summary] of indexes) {
    routes.add({
      method: 'GET',
      path,
      produces: INDEX_RESOURCE,
      handler: indexHandler(path, specs),
      doc: {
        tags: ['Index'],
        summary,
        ...(path === '/index' ? { security: [] } : {}),
        responses: {
          200: { description: 'HAL links; XML when application/xml, application/hal+xml or text/xml is asked for' },
        },
      },
    });
  }
}
