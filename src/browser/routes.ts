import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Request, Response } from 'express';
import type { AddFeatureRoutes } from '../http/feature.js';
import { HTML_SECURITY_HEADERS } from '../http/operator-routes.js';
import { body } from '../openapi/responses.js';
import { z } from '../openapi/zod.js';
import { PAGE_HTML, PAGE_STYLES } from './page.js';

const TAGS = ['Operations'];

/** The page's script modules (./client), each served as /browser/<name>.js; page.js imports the others. */
const CLIENT_MODULES = ['page', 'api', 'credentials', 'live', 'pager', 'views'] as const;

/**
 * A module of the page's script: compiled by the build (`tsc -p src/browser/client`) next to this module. Run
 * from source (tsx, the tests) there is no compiled file, and the module is compiled here the same way, once.
 */
async function compileScript(name: string): Promise<string> {
  const compiled = new URL(`./client/${name}.js`, import.meta.url);
  if (existsSync(compiled)) return readFile(compiled, 'utf8');
  const source = await readFile(new URL(`./client/${name}.ts`, import.meta.url), 'utf8');
  const { default: ts } = await import('typescript');
  return ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
  }).outputText;
}

/** Issue 27: the stock browser, a public static page; everything it shows it reads with the user's token. */
export const addBrowserRoutes: AddFeatureRoutes = (routes) => {
  const scripts = new Map<string, Promise<string>>();

  routes.add({
    method: 'GET',
    path: '/browser',
    produces: ['text/html'],
    handler: (_req: Request, res: Response) => {
      res.set(HTML_SECURITY_HEADERS).status(200).type('text/html').send(PAGE_HTML);
    },
    doc: {
      operationId: 'stock-browser',
      tags: TAGS,
      summary: 'The stock browser: a page to look up stock by SKU and watch it change',
      public: true,
      responses: { 200: body('The page', z.string(), ['text/html']) },
    },
  });
  routes.add({
    method: 'GET',
    path: '/browser/styles.css',
    handler: (_req: Request, res: Response) => {
      res.status(200).type('text/css').send(PAGE_STYLES);
    },
    doc: {
      operationId: 'stock-browser-styles',
      tags: TAGS,
      summary: "The stock browser's styles",
      public: true,
      hidden: true,
      responses: { 200: body('The styles', z.string(), ['text/css']) },
    },
  });
  for (const name of CLIENT_MODULES) {
    routes.add({
      method: 'GET',
      path: `/browser/${name}.js`,
      handler: async (_req: Request, res: Response) => {
        const script = scripts.get(name) ?? compileScript(name);
        scripts.set(name, script);
        res
          .status(200)
          .type('application/javascript')
          .send(await script);
      },
      doc: {
        operationId: name === 'page' ? 'stock-browser-script' : `stock-browser-script-${name}`,
        tags: TAGS,
        summary: `The stock browser's script: its ${name} module`,
        public: true,
        hidden: true,
        responses: { 200: body('The script', z.string(), ['application/javascript']) },
      },
    });
  }
};
