import express, { type Express, type Request } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { Routes } from '../../src/http/routing.js';

/**
 * The route table dispatches by a path's two leading segments (issue 38 item 4): a request must reach the same
 * route, with the same `req.route.path` and params, as when every route was tried in order, and a path of no
 * known prefix (a trailing or doubled slash, other case) must fare as before.
 */
function tableOf(paths: readonly string[]): Express {
  const routes = new Routes(loadConfig({}).bodies);
  for (const path of paths) {
    routes.add({
      method: 'GET',
      path,
      doc: { operationId: `probe${path}`, summary: 'A probe', tags: ['Probe'], responses: {} },
      handler: (req: Request, res) => {
        res.status(200).json({ route: (req.route as { path: string }).path, params: req.params });
      },
    });
  }
  const app = express();
  app.use(routes.router);
  app.use((req, res) => {
    res.status(404).json({ unrouted: req.path, allowed: routes.allowedMethods(req.path) });
  });
  return app;
}

const PATHS = [
  '/index',
  '/v1/products',
  '/v1/products/index',
  '/v1/products/:pKey',
  '/v1/units/:pKey',
  '/v1/units/:pKey/moves',
];

describe('the route table', () => {
  const app = tableOf(PATHS);

  it('answers each path by its own route, with the full pattern as req.route.path and the decoded params', async () => {
    const answers = await Promise.all(
      ['/index', '/v1/products', '/v1/products/index', '/v1/products/a%20b', '/v1/units/u1', '/v1/units/u1/moves'].map(
        (path) => request(app).get(path),
      ),
    );
    expect(answers.map((answer) => answer.body as unknown)).toStrictEqual([
      { route: '/index', params: {} },
      { route: '/v1/products', params: {} },
      { route: '/v1/products/index', params: {} },
      { route: '/v1/products/:pKey', params: { pKey: 'a b' } },
      { route: '/v1/units/:pKey', params: { pKey: 'u1' } },
      { route: '/v1/units/:pKey/moves', params: { pKey: 'u1' } },
    ]);
  });

  it('answers one trailing slash as Express does, and doubled slashes, other case and unknown prefixes by no route', async () => {
    expect((await request(app).get('/v1/products/')).body).toStrictEqual({ route: '/v1/products', params: {} });
    expect((await request(app).get('/index/')).body).toStrictEqual({ route: '/index', params: {} });
    expect((await request(app).get('/v1/units/u1/moves/')).body).toStrictEqual({
      route: '/v1/units/:pKey/moves',
      params: { pKey: 'u1' },
    });
    for (const path of ['//v1/products', '/v1//products', '/V1/products', '/v1/Products', '/v2/products', '/v1']) {
      const answer = await request(app).get(path);
      expect(answer.status, path).toBe(404);
      expect((answer.body as { unrouted: string }).unrouted, path).toBe(path);
    }
  });

  it('still routes a table whose routes do not all begin with literal segments, in the order they were added', async () => {
    const mixed = tableOf(['/v1/products/index', '/v1/:collection', '/v1/:collection/:key', '/v1/products/:pKey']);
    expect((await request(mixed).get('/v1/products/index')).body).toStrictEqual({
      route: '/v1/products/index',
      params: {},
    });
    expect((await request(mixed).get('/v1/products')).body).toStrictEqual({
      route: '/v1/:collection',
      params: { collection: 'products' },
    });
    expect((await request(mixed).get('/v1/products/p1')).body).toStrictEqual({
      route: '/v1/:collection/:key',
      params: { collection: 'products', key: 'p1' },
    });
  });
});
