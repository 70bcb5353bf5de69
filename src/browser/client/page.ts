/**
 * The stock browser (issue 27). It knows one address, /index, and finds everything else by following HAL links.
 * The token lives in a variable of this module only: never in storage, a cookie or the address.
 */

interface Link {
  href: string;
}
type Links = Record<string, Link | undefined>;
interface Resource {
  _links: Links;
  [field: string]: unknown;
}
interface Quantity {
  unitType: string[];
  magnitude: number | string;
}
interface StockRow {
  locationGroupName: string | null;
  onHand: Quantity;
  reserved: Quantity;
  available: Quantity;
}
interface Stock {
  onHand: Quantity;
  reserved: Quantity;
  available: Quantity;
  rows: StockRow[];
}

const RECONNECT_MS = 2000;

let token = '';
let sku = '';
let liveStream: AbortController | undefined;
let refreshTimer: number | undefined;

function element<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function say(text: string, error = false): void {
  const status = element('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

class RequestFailed extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function read<T>(href: string, accept = 'application/hal+json'): Promise<T> {
  const response = await fetch(href, { headers: { Authorization: `Bearer ${token}`, Accept: accept } });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { message?: string };
    throw new RequestFailed(response.status, body.message ?? `${response.status} ${response.statusText}`);
  }
  return (await response.json()) as T;
}

/** A link by its relation; the page has nothing to show without it. */
function link(resource: Resource, rel: string): string {
  const found = resource._links[rel];
  if (!found) throw new Error(`the service offers no '${rel}' link`);
  return found.href;
}

/**
 * RFC 6570 level 1 for the service's templates: each {name} filled in, and a query pair whose variable has no
 * value left out (`/v1/events?after={cursor}&limit={limit}` without values is `/v1/events`).
 */
function expand(template: string, values: Record<string, string>): string {
  const fill = (text: string): string =>
    text.replace(/\{(\w+)\}/g, (_whole, name: string) => encodeURIComponent(values[name] ?? ''));
  const [path = '', query] = template.split('?');
  const pairs = (query ?? '').split('&').filter((pair) => {
    const variable = /\{(\w+)\}/.exec(pair);
    return pair !== '' && (!variable || values[variable[1]!] !== undefined);
  });
  return pairs.length > 0 ? `${fill(path)}?${pairs.map(fill).join('&')}` : fill(path);
}

function quantity(value: Quantity | undefined): string {
  return value ? `${value.magnitude} ${value.unitType[1] ?? value.unitType[0] ?? ''}` : '';
}

function cell(row: HTMLTableRowElement, text: string, header = false): void {
  const node = document.createElement(header ? 'th' : 'td');
  if (header) node.setAttribute('scope', 'row');
  node.textContent = text;
  row.append(node);
}

function showStock(stock: Stock): void {
  element('stock-sku').textContent = sku;
  const rows = element<HTMLTableSectionElement>('stock-rows');
  rows.replaceChildren();
  for (const entry of stock.rows) {
    const row = rows.insertRow();
    row.dataset.group = entry.locationGroupName ?? '';
    cell(row, entry.locationGroupName ?? 'unknown place', true);
    cell(row, quantity(entry.onHand));
    cell(row, quantity(entry.reserved));
    cell(row, quantity(entry.available));
  }
  const total = element<HTMLTableSectionElement>('stock-total');
  total.replaceChildren();
  const row = total.insertRow();
  cell(row, 'Total', true);
  cell(row, quantity(stock.onHand));
  cell(row, quantity(stock.reserved));
  cell(row, quantity(stock.available));
  element('stock').hidden = false;
}

function placeOf(unit: Resource): string {
  const loadUnit = unit.loadUnit as { transportUnitBK?: string; physicalPosition?: string } | undefined;
  if (loadUnit) return `in ${loadUnit.transportUnitBK} / ${loadUnit.physicalPosition}`;
  const location = unit.actualLocation as { locationId?: string } | undefined;
  return location ? `on ${location.locationId}` : 'nowhere known';
}

function showUnits(units: Resource[], selected: string | undefined): void {
  const list = element('unit-list');
  list.replaceChildren();
  for (const unit of units) {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'unit';
    const self = link(unit, 'self');
    button.dataset.href = self;
    button.setAttribute('aria-pressed', String(self === selected));
    button.textContent = `${quantity(unit.quantity as Quantity)} · ${String(unit.state)} · ${placeOf(unit)}`;
    button.addEventListener('click', () => void openUnit(self));
    item.append(button);
    list.append(item);
  }
  if (units.length === 0) list.textContent = 'No PackagingUnits.';
  element('units').hidden = false;
}

function detail(list: HTMLElement, term: string, value: string): void {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.textContent = value;
  list.append(dt, dd);
}

let openedUnit: string | undefined;

/** The unit by its self link, and its LoadUnit by the unit's `loadUnit` link when it lies in one. */
async function openUnit(href: string): Promise<void> {
  try {
    const unit = await read<Resource>(href);
    openedUnit = href;
    const details = element('unit-details');
    details.replaceChildren();
    detail(details, 'pKey', String(unit.pKey));
    detail(details, 'Quantity', quantity(unit.quantity as Quantity));
    detail(details, 'Available', quantity(unit.qtyAvailable as Quantity));
    detail(details, 'State', String(unit.state));
    const loadUnitHref = unit._links.loadUnit?.href;
    if (loadUnitHref) {
      const loadUnit = await read<Resource>(loadUnitHref);
      detail(details, 'TransportUnit', String(loadUnit.transportUnitBK));
      detail(details, 'LoadUnit position', String(loadUnit.physicalPosition));
      detail(details, 'LoadUnit type', String(loadUnit.type));
      detail(details, 'LoadUnit locked', loadUnit.locked ? 'yes' : 'no');
    }
    const location = unit.actualLocation as { locationId?: string; locationGroupName?: string } | undefined;
    if (location) detail(details, 'Location', `${location.locationId} (${location.locationGroupName ?? 'no group'})`);
    element('unit').hidden = false;
    for (const button of element('unit-list').querySelectorAll('button')) {
      button.setAttribute('aria-pressed', String(button.dataset.href === href));
    }
    element('unit-heading').focus();
  } catch (error) {
    say(`The unit could not be read: ${(error as Error).message}`, true);
  }
}

async function showProduct(): Promise<void> {
  const root = await read<Resource>('/index');
  const products = await read<Resource>(link(root, 'product-index'));
  const product = await read<Resource>(expand(link(products, 'products-findbysku'), { sku }));
  const stockHref = `${expand(link(products, 'stock-findbysku'), { sku })}&by=locationGroup`;
  const [stock, units] = await Promise.all([
    read<Stock>(stockHref, 'application/json'),
    read<{ _embedded?: { 'packaging-units'?: Resource[] } }>(link(product, 'packaging-units')),
  ]);
  showStock(stock);
  showUnits(units._embedded?.['packaging-units'] ?? [], openedUnit);
  if (openedUnit) await openUnit(openedUnit);
}

function showLive(state: string): void {
  element('live-state').textContent = state;
}

function addLiveEntry(type: string, data: string): void {
  const entry = document.createElement('li');
  const time = new Date().toLocaleTimeString();
  const event = JSON.parse(data) as { resource?: { sku?: string; product?: { sku?: string } } };
  const about = event.resource?.sku ?? event.resource?.product?.sku ?? '';
  entry.textContent = `${time} ${type}${about ? ` · ${about}` : ''}`;
  const live = element('live');
  live.prepend(entry);
  while (live.children.length > 50) live.lastElementChild?.remove();
}

/** A change that names the SKU on show refreshes what is shown, once for a burst of changes. */
function refreshSoon(): void {
  window.clearTimeout(refreshTimer);
  refreshTimer = window.setTimeout(() => {
    showProduct().catch((error: unknown) => say(`Refreshing failed: ${(error as Error).message}`, true));
  }, 150);
}

/**
 * Server-Sent Events read with fetch, because EventSource cannot send the Authorization header. A dropped stream
 * is opened again with Last-Event-ID, so nothing is missed in between.
 */
async function followChanges(abort: AbortSignal): Promise<void> {
  const root = await read<Resource>('/index');
  const events = await read<Resource>(link(root, 'events-index'));
  const feed = expand(link(events, 'events-feed'), {});
  let lastEventId: string | undefined;
  while (!abort.aborted) {
    try {
      const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const response = await fetch(feed, { headers, signal: abort });
      if (!response.ok || !response.body) throw new Error(`${response.status} ${response.statusText}`);
      showLive('connected');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += value;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          const data = fields.get('data');
          if (fields.has('id')) lastEventId = fields.get('id');
          if (data === undefined) continue;
          addLiveEntry(fields.get('event') ?? 'message', data);
          if (sku && data.includes(JSON.stringify(sku))) refreshSoon();
        }
      }
    } catch (error) {
      if (abort.aborted) return;
      showLive(`reconnecting (${(error as Error).message})`);
    }
    await new Promise((resolve) => window.setTimeout(resolve, RECONNECT_MS));
  }
}

async function search(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const newToken = (form.elements.namedItem('token') as HTMLInputElement).value.trim();
  sku = (form.elements.namedItem('sku') as HTMLInputElement).value.trim();
  if (newToken !== token || !liveStream) {
    token = newToken;
    liveStream?.abort();
    liveStream = new AbortController();
    const signal = liveStream.signal;
    followChanges(signal).catch((error: unknown) => showLive(`not connected: ${(error as Error).message}`));
  }
  openedUnit = undefined;
  element('unit').hidden = true;
  say(`Looking up ${sku}…`);
  try {
    await showProduct();
    say(`Showing ${sku}.`);
  } catch (error) {
    element('stock').hidden = true;
    element('units').hidden = true;
    const notFound = error instanceof RequestFailed && error.status === 404;
    say(notFound ? `No Product with SKU ${sku}.` : `The lookup failed: ${(error as Error).message}`, true);
  }
}

element<HTMLFormElement>('search').addEventListener('submit', (event) => void search(event));
