import { XMLParser } from 'fast-xml-parser';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { expectServerDeclined, HAL_JSON_UTF8, JSON_UTF8 } from '../support/http.js';
import { bearer } from '../support/tokens.js';

const ctx = useTestApp();
const HOST = 'inventory.example:8080';
const BASE = `http://${HOST}`;

type Links = Record<string, { href: string; type?: string; templated?: boolean }>;

/** Issue 13: a link whose href has RFC 6570 variables carries `templated: true`, so HAL clients expand it. */
const templated = (path: string): { templated?: boolean } => (path.includes('{') ? { templated: true } : {});

function hrefs(paths: Record<string, string>, base = BASE): Links {
  return Object.fromEntries(
    Object.entries(paths).map(([rel, path]) => [rel, { href: `${base}${path}`, ...templated(path) }]),
  );
}

function typed(paths: Record<string, [string, string]>, base = BASE): Links {
  return Object.fromEntries(
    Object.entries(paths).map(([rel, [method, path]]) => [
      rel,
      { href: `${base}${path}`, type: method, ...templated(path) },
    ]),
  );
}

// The expected maps are written out from spec part 4 and D7, not derived from the implementation.
const ROOT: Links = hrefs({
  'product-index': '/v1/products/index',
  'load-unit-index': '/v1/load-units/index',
  'packaging-unit-index': '/v1/packaging-units/index',
  'events-index': '/v1/events/index',
  'reservations-index': '/allocation/reservations/index',
  self: '/index',
});

const PRODUCTS: Links = hrefs({
  'products-findall': '/v1/products',
  'products-findbysku': '/v1/products?sku={sku}',
  'products-findbyspkey': '/v1/products/{pKey}',
  'products-findbyskuanduom': '/v1/products?sku={sku}&uom={uom}',
  'products-create': '/v1/products',
  'products-update': '/v1/products',
  'products-delete': '/v1/products/{pKey}',
  'stock-findbysku': '/v1/stock?sku={sku}',
  'stock-findall': '/v1/stock',
  self: '/v1/products/index',
});

const LOAD_UNITS: Links = {
  ...typed({
    'lu-divide': ['POST', '/v1/transport-unit'],
    'lu-findbypkey': ['GET', '/v1/load-units/{pKey}'],
    'lu-findpuinlu': ['GET', '/v1/load-units/{pKey}/packaging-units'],
    'lu-putproductinto': ['PUT', '/v1/load-units/{pKey}'],
  }),
  ...hrefs({ self: '/v1/load-units/index' }),
};

const ON_LU = '/v1/transport-units/{transportUnitBK}/load-units/{luPos}/packaging-units';
const PACKAGING_UNITS: Links = {
  ...typed({
    'packaging-units-create': ['POST', ON_LU],
    'packaging-units-createonlocation': ['POST', '/v1/packaging-units'],
    'packaging-units-findbypkey': ['GET', '/v1/packaging-units/{pKey}'],
    'packaging-units-findontu': ['GET', '/v2/transport-units/{transportUnitBK}/load-units/packaging-units'],
    'packaging-units-findontuandlu': ['GET', ON_LU],
    'packaging-units-findforproduct': [
      'GET',
      '/v1/packaging-units?sku={sku}&amount={amount}&sortDirection={sortDirection}&sortProperty={sortProperty}',
    ],
    'packaging-units-findforproductinlg': [
      'GET',
      '/v1/packaging-units?productPKey={productPKey}&locationGroupName={locationGroupName}&sortDirection={sortDirection}&sortProperty={sortProperty}',
    ],
    'packaging-units-update': ['PUT', '/v1/packaging-units/{pKey}'],
    'packaging-units-movebetweenlocations': ['PUT', '/v1/packaging-units/move-between-locations'],
    'packaging-units-movefromlocationtoloadunit': ['PUT', '/v1/packaging-units/move-to-load-unit'],
    'packaging-units-movepuquantity': ['PUT', ON_LU],
    'packaging-units-deleteonlocation': ['DELETE', '/v1/packaging-units'],
    'packaging-units-deletebypkey': ['DELETE', '/v1/packaging-units/{pKey}'],
    'packaging-units-releasepu': ['POST', '/v1/packaging-units/{pKey}/release'],
    'packaging-units-reportproblemforpuinlu': ['POST', `${ON_LU}/failures`],
  }),
  ...hrefs({ self: '/v1/packaging-units/index' }),
};

// D29: the change feed, linked like the LoadUnit and PackagingUnit operations (with its method).
const EVENTS: Links = {
  ...typed({ 'events-feed': ['GET', '/v1/events?after={cursor}&limit={limit}&wait={wait}'] }),
  ...hrefs({ self: '/v1/events/index' }),
};

const INDEXES: [string, Links][] = [
  ['/index', ROOT],
  ['/v1/products/index', PRODUCTS],
  ['/v1/load-units/index', LOAD_UNITS],
  ['/v1/packaging-units/index', PACKAGING_UNITS],
  ['/v1/events/index', EVENTS],
];

function get(path: string, accept?: string, app = ctx.app): request.Test {
  const test = request(app).get(path).set('Host', HOST).set('Authorization', bearer());
  return accept === undefined ? test : test.set('Accept', accept);
}

interface XmlLink {
  '@rel': string;
  '@href': string;
  '@type'?: string;
  '@templated'?: string;
}

/** HAL+XML back into the JSON link map, so both representations are held to the same expectation. */
function linksOfXml(text: string): Links {
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    isArray: (name) => name === 'link',
  }).parse(text) as { resource: { '@href': string; link?: XmlLink[] } };
  const links: Links = { self: { href: parsed.resource['@href'] } };
  for (const link of parsed.resource.link ?? []) {
    links[link['@rel']] = {
      href: link['@href'],
      ...(link['@type'] ? { type: link['@type'] } : {}),
      ...(link['@templated'] === 'true' ? { templated: true } : {}),
    };
  }
  return links;
}

describe('GET /index', () => {
  it('is public and answers HAL JSON with absolute hrefs built from the request host', async () => {
    const response = await request(ctx.app).get('/index').set('Host', HOST);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toStrictEqual({ _links: ROOT });
  });
});

describe.each(INDEXES)('GET %s', (path, expected) => {
  it('answers HAL JSON with exactly the spec link names and hrefs', async () => {
    const response = await get(path);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(HAL_JSON_UTF8);
    expect(response.body).toStrictEqual({ _links: expected });
  });

  it.each([
    ['no Accept', undefined, HAL_JSON_UTF8],
    ['Accept */*', '*/*', HAL_JSON_UTF8],
    ['Accept application/*', 'application/*', HAL_JSON_UTF8],
    ['Accept application/json', 'application/json', JSON_UTF8],
    ['Accept that prefers HAL JSON over XML', 'application/hal+json, application/xml;q=0.5', HAL_JSON_UTF8],
  ])('answers JSON for %s', async (_case, accept, contentType) => {
    const response = await get(path, accept);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(contentType);
    expect(JSON.parse(response.text)).toStrictEqual({ _links: expected });
  });

  it.each(['application/xml', 'application/hal+xml', 'text/xml'])(
    'answers XML in the requested type %s with the same links',
    async (accept) => {
      const response = await get(path, accept);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe(`${accept}; charset=utf-8`);
      expect(response.text.startsWith('<?xml')).toBe(true);
      expect(linksOfXml(response.text)).toStrictEqual(expected);
    },
  );

  it('answers 406 for Accept text/* alone (XML is only served when named)', async () => {
    const response = await get(path, 'text/*');
    expectServerDeclined(response, {
      status: 406,
      error: 'Not Acceptable',
      exception: 'HttpMediaTypeNotAcceptableException',
      message: /acceptable/i,
      path,
    });
  });

  it('ignores X-Forwarded-Proto, -Host and -Prefix without TRUST_PROXY', async () => {
    const response = await get(path)
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'shop.example')
      .set('X-Forwarded-Prefix', '/inventory');
    expect(response.body).toStrictEqual({ _links: expected });
  });
});

describe('with TRUST_PROXY=true', () => {
  const proxied = useTestApp({ TRUST_PROXY: 'true' });
  const PUBLIC_BASE = 'https://shop.example/inventory';

  function rebased(links: Links, base: string): Links {
    return Object.fromEntries(
      Object.entries(links).map(([rel, link]) => [rel, { ...link, href: link.href.replace(BASE, base) }]),
    );
  }

  it.each(INDEXES)('builds the hrefs of %s from X-Forwarded-Proto, -Host and -Prefix', async (path, expected) => {
    const response = await get(path, undefined, proxied.app)
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'shop.example')
      .set('X-Forwarded-Prefix', '/inventory/');
    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({ _links: rebased(expected, PUBLIC_BASE) });
  });

  it('uses the XML form with the forwarded base too', async () => {
    const response = await get('/index', 'application/xml', proxied.app)
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'shop.example')
      .set('X-Forwarded-Prefix', '/inventory');
    expect(linksOfXml(response.text)).toStrictEqual(rebased(ROOT, PUBLIC_BASE));
  });

  it('falls back to the Host header when no forwarded headers are sent', async () => {
    const response = await get('/v1/load-units/index', undefined, proxied.app);
    expect(response.body).toStrictEqual({ _links: LOAD_UNITS });
  });

  it('ignores an X-Forwarded-Prefix that is not a path', async () => {
    const response = await get('/index', undefined, proxied.app).set('X-Forwarded-Prefix', 'javascript:alert(1)');
    expect(response.body).toStrictEqual({ _links: ROOT });
  });
});
