/**
 * The stock browser's document and styles (issue 27, D39). Everything is served by the service itself, so the page
 * works without internet access; its script lives in ./client and is compiled by the build. Scrollable regions
 * take the keyboard focus (tabindex, a role and a name), and both colour schemes keep a contrast of 4.5:1.
 */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stock browser · Inventory Service</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/browser/styles.css">
<script type="module" src="/browser/page.js"></script>
</head>
<body>
<header><h1>Stock browser</h1></header>
<main>
  <div id="session" class="session" hidden>
    <p id="session-state"></p>
    <button id="login" type="button">Log in</button>
    <button id="logout" type="button" hidden>Log out</button>
  </div>
  <form id="search" class="search">
    <div class="field" id="token-field">
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="off" required
        aria-describedby="token-hint">
      <small id="token-hint">Kept only in this tab's memory; a reload forgets it.</small>
    </div>
    <div class="field">
      <label for="sku">SKU</label>
      <input id="sku" name="sku" type="search" required autocomplete="off">
    </div>
    <button type="submit">Show stock</button>
  </form>
  <p id="status" role="status" aria-live="polite"></p>

  <section id="stock" aria-labelledby="stock-heading" hidden>
    <h2 id="stock-heading">Stock of <span id="stock-sku"></span></h2>
    <div class="scroll" tabindex="0" role="region" aria-label="Stock table">
      <table>
        <thead>
          <tr><th scope="col">Location group</th><th scope="col">On hand</th><th scope="col">Reserved</th>
            <th scope="col">Available</th></tr>
        </thead>
        <tbody id="stock-rows"></tbody>
        <tfoot id="stock-total"></tfoot>
      </table>
    </div>
  </section>

  <section id="units" aria-labelledby="units-heading" hidden>
    <h2 id="units-heading">PackagingUnits</h2>
    <div class="pager">
      <p id="units-count" role="status"></p>
      <button id="units-previous" type="button" disabled>Previous units</button>
      <button id="units-next" type="button" disabled>Next units</button>
    </div>
    <ul id="unit-list" class="units"></ul>
  </section>

  <section id="unit" aria-labelledby="unit-heading" hidden>
    <h2 id="unit-heading" tabindex="-1">PackagingUnit</h2>
    <dl id="unit-details"></dl>
  </section>

  <section aria-labelledby="live-heading">
    <h2 id="live-heading">Live changes <span id="live-state" class="badge">not connected</span></h2>
    <ol id="live" class="live" tabindex="0" aria-labelledby="live-heading" aria-live="polite"
      aria-relevant="additions"></ol>
  </section>

  <section aria-labelledby="products-heading">
    <h2 id="products-heading">Products</h2>
    <form id="product-search" class="search">
      <div class="field">
        <label for="product-filter">Filter Products</label>
        <input id="product-filter" name="filter" type="search" autocomplete="off" aria-describedby="filter-hint">
        <small id="filter-hint">Narrows the page shown to rows whose SKU or label holds the text.</small>
      </div>
      <button type="submit">Show Products</button>
    </form>
    <div class="pager">
      <p id="products-count" role="status"></p>
      <button id="products-previous" type="button" disabled>Previous Products</button>
      <button id="products-next" type="button" disabled>Next Products</button>
    </div>
    <div id="product-table" class="scroll" tabindex="0" role="region" aria-label="Products table" hidden>
      <table>
        <thead><tr><th scope="col">SKU</th><th scope="col">Label</th><th scope="col">Base unit</th></tr></thead>
        <tbody id="product-rows"></tbody>
      </table>
    </div>
  </section>
</main>
</body>
</html>
`;

export const PAGE_STYLES = `:root { color-scheme: light dark; --accent: #0b5cad; --line: #8888; --muted: #555;
  --error: #b00020; --bg: #fff; --fg: #1a1a1a; font-family: system-ui, sans-serif; }
@media (prefers-color-scheme: dark) {
  :root { --muted: #bbb; --error: #ff8a80; --line: #fff6; --bg: #121212; --fg: #eee; }
}
body { margin: 0; line-height: 1.4; background: var(--bg); color: var(--fg); }
header { padding: 0.75rem 1rem; background: var(--accent); color: #fff; }
h1 { margin: 0; font-size: 1.4rem; }
h2 { font-size: 1.15rem; margin: 1.25rem 0 0.5rem; }
main { max-width: 60rem; margin: 0 auto; padding: 0.5rem 1rem 2rem; }
.search { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: end; }
.field { display: flex; flex-direction: column; flex: 1 1 14rem; }
label { font-weight: 600; }
input, button { font: inherit; padding: 0.6rem 0.7rem; min-height: 2.75rem; border-radius: 0.3rem; }
input { border: 1px solid #888; background: var(--bg); color: var(--fg); }
button { border: 0; background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { background: transparent; color: var(--muted); border: 1px solid var(--line); cursor: default; }
button.unit, button.link { width: 100%; text-align: left; background: transparent; color: inherit;
  border: 1px solid var(--line); }
button.link { min-height: 2.75rem; padding: 0.3rem 0.5rem; font-weight: 600; }
button.unit[aria-pressed="true"] { border-color: var(--accent); box-shadow: inset 4px 0 var(--accent); }
:focus-visible { outline: 3px solid #f90; outline-offset: 2px; }
small { color: var(--muted); }
#status:empty { display: none; }
.session { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
.session p { margin: 0; flex: 1 1 12rem; }
[hidden] { display: none !important; }
#status.error { color: var(--error); font-weight: 600; }
.pager { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
.pager p { margin: 0; flex: 1 1 12rem; font-weight: 600; }
.scroll { overflow: auto; max-height: 32rem; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--line); text-align: right; }
th:first-child, td:first-child { text-align: left; }
tfoot td { font-weight: 700; }
.units { list-style: none; padding: 0; display: grid; gap: 0.5rem; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
.badge { font-size: 0.8rem; font-weight: 400; padding: 0.1rem 0.5rem; border-radius: 1rem; border: 1px solid var(--line); }
.live { font-family: ui-monospace, monospace; font-size: 0.9rem; max-height: 14rem; overflow-y: auto; }
`;
