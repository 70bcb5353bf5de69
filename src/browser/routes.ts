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
const CLIENT_MODULES = ['page', 'api', 'credentials', 'live', 'login', 'pager', 'views'] as const;

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

const LoginSettings = z
  .union([
    z.object({ login: z.literal('provider'), issuer: z.string(), clientId: z.string(), scope: z.string() }),
    z.object({ login: z.literal('token') }),
  ])
  .openapi('BrowserLoginSettings');

/**
 * D37: with a provider login, the page's scripts may also talk to the provider's origin (discovery, token
 * endpoint); everything else stays the page's own origin.
 */
function pageHeaders(issuer: string | undefined): Record<string, string> {
  if (!issuer) return HTML_SECURITY_HEADERS;
  const policy = HTML_SECURITY_HEADERS['Content-Security-Policy'];
  return {
    ...HTML_SECURITY_HEADERS,
    'Content-Security-Policy': `${policy}; connect-src 'self' ${new URL(issuer).origin}`,
  };
}

/** Issue 27: the stock browser, a public static page; everything it shows it reads with the user's token. */
export const addBrowserRoutes: AddFeatureRoutes = (routes, { config }) => {
  const scripts = new Map<string, Promise<string>>();
  const login = config.browserLogin;
  const headers = pageHeaders(login?.issuer);
  const settings: z.infer<typeof LoginSettings> = login
    ? { login: 'provider', issuer: login.issuer, clientId: login.clientId, scope: login.scopes }
    : { login: 'token' };

  routes.add({
    method: 'GET',
    path: '/browser',
    produces: ['text/html'],
    handler: (_req: Request, res: Response) => {
      res.set(headers).status(200).type('text/html').send(PAGE_HTML);
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
    path: '/browser/login',
    handler: (_req: Request, res: Response) => {
      res.status(200).json(settings);
    },
    doc: {
      operationId: 'stock-browser-login',
      tags: TAGS,
      summary: "How the stock browser logs in: the provider's issuer, its public client and scopes, or a token",
      description:
        'With `BROWSER_OIDC_CLIENT_ID` (and `AUTH_OIDC_ISSUER_URL`) the page logs in at the provider with ' +
        'Authorization Code and PKCE (D37); without, it asks for an access token.',
      public: true,
      responses: { 200: body('The login settings', LoginSettings, ['application/json']) },
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
