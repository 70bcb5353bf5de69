import { link, type Resource } from './api.js';

/** What the page shows, drawn from what the service answered; no requests here. */
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
export interface Stock {
  onHand: Quantity;
  reserved: Quantity;
  available: Quantity;
  rows: StockRow[];
}

function element(id: string): HTMLElement {
  return document.getElementById(id)!;
}

function quantity(value: Quantity | undefined): string {
  return value ? `${value.magnitude} ${value.unitType[1] ?? value.unitType[0] ?? ''}` : '';
}

function cell(row: HTMLTableRowElement, content: string | Node, header = false): void {
  const node = document.createElement(header ? 'th' : 'td');
  if (header) node.setAttribute('scope', 'row');
  node.append(content);
  row.append(node);
}

function figures(row: HTMLTableRowElement, name: string, entry: Omit<StockRow, 'locationGroupName'>): void {
  cell(row, name, true);
  cell(row, quantity(entry.onHand));
  cell(row, quantity(entry.reserved));
  cell(row, quantity(entry.available));
}

export function showStock(sku: string, stock: Stock): void {
  element('stock-sku').textContent = sku;
  const rows = element('stock-rows') as HTMLTableSectionElement;
  rows.replaceChildren();
  for (const entry of stock.rows) {
    const row = rows.insertRow();
    row.dataset.group = entry.locationGroupName ?? '';
    figures(row, entry.locationGroupName ?? 'unknown place', entry);
  }
  const total = element('stock-total') as HTMLTableSectionElement;
  total.replaceChildren();
  figures(total.insertRow(), 'Total', stock);
}

function placeOf(unit: Resource): string {
  const loadUnit = unit.loadUnit as { transportUnitBK?: string; physicalPosition?: string } | undefined;
  if (loadUnit) return `in ${loadUnit.transportUnitBK} / ${loadUnit.physicalPosition}`;
  const location = unit.actualLocation as { locationId?: string } | undefined;
  return location ? `on ${location.locationId}` : 'nowhere known';
}

export function showUnits(units: Resource[], selected: string | undefined, open: (href: string) => void): void {
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
    button.addEventListener('click', () => open(self));
    item.append(button);
    list.append(item);
  }
}

function detail(list: HTMLElement, term: string, value: string): void {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.textContent = value;
  list.append(dt, dd);
}

export function showUnitDetails(unit: Resource, loadUnit: Resource | undefined): void {
  const details = element('unit-details');
  details.replaceChildren();
  detail(details, 'pKey', String(unit.pKey));
  detail(details, 'Quantity', quantity(unit.quantity as Quantity));
  detail(details, 'Available', quantity(unit.qtyAvailable as Quantity));
  detail(details, 'State', String(unit.state));
  if (loadUnit) {
    detail(details, 'TransportUnit', String(loadUnit.transportUnitBK));
    detail(details, 'LoadUnit position', String(loadUnit.physicalPosition));
    detail(details, 'LoadUnit type', String(loadUnit.type));
    detail(details, 'LoadUnit locked', loadUnit.locked ? 'yes' : 'no');
  }
  const location = unit.actualLocation as { locationId?: string; locationGroupName?: string } | undefined;
  if (location) detail(details, 'Location', `${location.locationId} (${location.locationGroupName ?? 'no group'})`);
}

/** A row per Product; its SKU is a button that shows that Product's stock. */
export function showProducts(products: Resource[], choose: (sku: string) => void): void {
  const rows = element('product-rows') as HTMLTableSectionElement;
  rows.replaceChildren();
  for (const product of products) {
    const row = rows.insertRow();
    const sku = String(product.sku);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'link';
    button.textContent = sku;
    button.addEventListener('click', () => choose(sku));
    cell(row, button, true);
    cell(row, String(product.label ?? ''));
    cell(row, quantity(product.baseUnit as Quantity | undefined));
  }
}
