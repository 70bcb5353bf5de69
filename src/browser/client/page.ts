/**
 * The stock browser (issue 27, D39): a SKU's stock by LocationGroup, its units a page at a time, the Products a
 * page at a time, and the SKU's changes live. Everything is found from /index by following HAL links.
 */
import { expand, follow, link, read, RequestFailed, withParameter, type Resource } from './api.js';
import { hasToken, useToken } from './credentials.js';
import { followChanges } from './live.js';
import { ProviderLogin, type LoginSettings } from './login.js';
import { Pager } from './pager.js';
import { showProducts, showStock, showUnitDetails, showUnits, type Stock } from './views.js';

const PAGE_SIZE = '100';

let sku = '';
let openedUnit: string | undefined;
let liveStream: AbortController | undefined;
let refreshTimer: number | undefined;
/** Set when the service names a provider (D37): the page logs in there instead of asking for a token. */
let providerLogin: ProviderLogin | undefined;

function element<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function say(text: string, error = false): void {
  const status = element('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

function showLive(state: string): void {
  element('live-state').textContent = state;
}

const units = new Pager<Resource>('units', 'packaging-units', 'Units', (items) =>
  showUnits(items, openedUnit, (href) => void openUnit(href, true)),
);
const products = new Pager<Resource>('products', 'products', 'Products', (items) => {
  showProducts(items, (chosen) => {
    element<HTMLInputElement>('sku').value = chosen;
    element<HTMLFormElement>('search').requestSubmit();
  });
  filterProducts();
});

/** The unit by its self link, and its LoadUnit by the unit's `loadUnit` link when it lies in one. */
async function openUnit(href: string, focus = false): Promise<void> {
  try {
    const unit = await read<Resource>(href);
    const loadUnitHref = unit._links.loadUnit?.href;
    const loadUnit = loadUnitHref ? await read<Resource>(loadUnitHref) : undefined;
    openedUnit = href;
    showUnitDetails(unit, loadUnit);
    element('unit').hidden = false;
    for (const button of element('unit-list').querySelectorAll('button')) {
      button.setAttribute('aria-pressed', String(button.dataset.href === href));
    }
    if (focus) element('unit-heading').focus();
  } catch (error) {
    say(`The unit could not be read: ${(error as Error).message}`, true);
  }
}

/** The SKU's figures and the page of units on show; the first page of units when `fromStart`. */
async function showProduct(fromStart: boolean): Promise<void> {
  const index = await follow('product-index');
  const product = await read<Resource>(expand(link(index, 'products-findbysku'), { sku }));
  const stockHref = `${expand(link(index, 'stock-findbysku'), { sku })}&by=locationGroup`;
  const unitsHref = withParameter(link(product, 'packaging-units'), 'amount', PAGE_SIZE);
  const [stock] = await Promise.all([
    read<Stock>(stockHref, 'application/json'),
    fromStart ? units.start(unitsHref) : units.reload(),
  ]);
  showStock(sku, stock);
  element('stock').hidden = false;
  element('units').hidden = false;
  if (openedUnit) await openUnit(openedUnit);
}

function refresh(): Promise<void> {
  return showProduct(false).catch((error: unknown) => say(`Refreshing failed: ${(error as Error).message}`, true));
}

/** A burst of changes to the SKU refreshes what is shown once. */
function refreshSoon(): void {
  window.clearTimeout(refreshTimer);
  refreshTimer = window.setTimeout(() => void refresh(), 150);
}

function addLiveEntry(type: string, data: string): void {
  const entry = document.createElement('li');
  const event = JSON.parse(data) as { resource?: { sku?: string; product?: { sku?: string } } };
  const about = event.resource?.sku ?? event.resource?.product?.sku ?? '';
  entry.textContent = `${new Date().toLocaleTimeString()} ${type}${about ? ` · ${about}` : ''}`;
  const live = element('live');
  live.prepend(entry);
  while (live.children.length > 50) live.lastElementChild?.remove();
}

function follows(chosen: string): void {
  liveStream?.abort();
  liveStream = new AbortController();
  const handlers = {
    connected: refresh,
    event: (type: string, data: string) => {
      addLiveEntry(type, data);
      refreshSoon();
    },
    state: showLive,
  };
  followChanges(chosen, handlers, liveStream.signal).catch((error: unknown) =>
    showLive(`not connected: ${(error as Error).message}`),
  );
}

async function search(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  if (!providerLogin) useToken(element<HTMLInputElement>('token').value);
  if (!hasToken()) return say('Log in first.', true);
  sku = element<HTMLInputElement>('sku').value.trim();
  openedUnit = undefined;
  element('unit').hidden = true;
  say(`Looking up ${sku}…`);
  try {
    await showProduct(true);
    say(`Showing ${sku}.`);
    follows(sku);
  } catch (error) {
    liveStream?.abort();
    showLive('not connected');
    element('stock').hidden = true;
    element('units').hidden = true;
    const notFound = error instanceof RequestFailed && error.status === 404;
    say(notFound ? `No Product with SKU ${sku}.` : `The lookup failed: ${(error as Error).message}`, true);
  }
}

async function listProducts(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  if (!providerLogin) useToken(element<HTMLInputElement>('token').value);
  if (!hasToken()) return say(providerLogin ? 'Log in first.' : 'Enter an access token first.', true);
  try {
    const all = link(await follow('product-index'), 'products-findall');
    await products.start(withParameter(all, 'limit', PAGE_SIZE));
    element('product-table').hidden = false;
  } catch (error) {
    say(`The Products could not be read: ${(error as Error).message}`, true);
  }
}

/** The filter narrows the page of Products on show, by SKU or label. */
function filterProducts(): void {
  const text = element<HTMLInputElement>('product-filter').value.trim().toLowerCase();
  for (const row of element('product-rows').querySelectorAll('tr')) {
    row.hidden = text !== '' && !(row.textContent ?? '').toLowerCase().includes(text);
  }
}

element<HTMLFormElement>('search').addEventListener('submit', (event) => void search(event));
element<HTMLFormElement>('product-search').addEventListener('submit', (event) => void listProducts(event));
element('product-filter').addEventListener('input', filterProducts);

function showSession(text: string, loggedIn: boolean): void {
  element('session-state').textContent = text;
  element('login').hidden = loggedIn;
  element('logout').hidden = !loggedIn;
}

/** The login the service names: at its provider (the token field goes), or the token field (development). */
async function setUpLogin(): Promise<void> {
  const settings = (await (await fetch('/browser/login')).json()) as LoginSettings;
  if (settings.login !== 'provider') return;
  const token = element<HTMLInputElement>('token');
  token.required = false;
  element('token-field').hidden = true;
  element('session').hidden = false;
  showSession('Not logged in.', false);
  const ended = (reason: string): void => {
    liveStream?.abort();
    showLive('not connected');
    showSession(reason, false);
  };
  providerLogin = await ProviderLogin.discover(settings as Required<LoginSettings>, ended);
  element('login').addEventListener('click', () => void providerLogin?.start());
  element('logout').addEventListener('click', () => providerLogin?.logout());
  const name = await providerLogin.finish();
  if (name) showSession(`Logged in as ${name}.`, true);
}

setUpLogin().catch((error: unknown) => say(`The login could not be set up: ${(error as Error).message}`, true));
