/**
 * The status page itself: one HTML document with its style and script inline (no fonts, no CDN, no
 * other request than its data), which asks `/api/status` again every `refreshMs` and redraws. Every
 * value is put in with `textContent`, never as markup.
 */

/** The page. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kvt cluster status</title>
<style>
  :root { --fg: #1d2430; --muted: #5d6878; --bg: #f6f7f9; --card: #fff; --line: #dde1e7; --live: #137a3a; --live-bg: #e3f5e9; --dead: #b3261e; --dead-bg: #fde7e5; --warn: #8a5a00; --warn-bg: #fff3d6; }
  @media (prefers-color-scheme: dark) {
    :root { --fg: #e6e9ee; --muted: #9aa4b2; --bg: #12161c; --card: #1b2028; --line: #2c333d; --live: #6fd893; --live-bg: #173524; --dead: #ff8a80; --dead-bg: #3d1c1a; --warn: #ffcc66; --warn-bg: #3a2f12; }
  }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 12px 24px; padding: 16px 24px; border-bottom: 1px solid var(--line); background: var(--card); }
  h1 { margin: 0; font-size: 20px; }
  h2 { font-size: 16px; margin: 24px 0 8px; }
  h3 { font-size: 14px; margin: 0 0 6px; font-weight: 600; }
  main { padding: 8px 24px 32px; max-width: 1400px; }
  .muted { color: var(--muted); }
  .summary span { margin-right: 16px; }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
  .live { color: var(--live); background: var(--live-bg); }
  .dead { color: var(--dead); background: var(--dead-bg); }
  .CREATING, .DELETING { color: var(--warn); background: var(--warn-bg); }
  .ACTIVE { color: var(--live); background: var(--live-bg); }
  #banner { display: none; margin: 12px 0 0; padding: 8px 12px; border-radius: 6px; color: var(--dead); background: var(--dead-bg); }
  table { border-collapse: collapse; width: 100%; background: var(--card); border: 1px solid var(--line); }
  th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
  th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
  .kvt-table { margin: 0 0 16px; }
  .scope-title { font-size: 15px; font-weight: 600; margin: 14px 0 8px; }
  .empty { padding: 8px 0; }
</style>
</head>
<body>
<header>
  <h1>kvt cluster</h1>
  <div class="summary" id="summary"><span class="muted">loading…</span></div>
  <div class="muted" id="updated"></div>
</header>
<main>
  <div id="banner" role="alert"></div>
  <h2>Segment stores</h2>
  <table id="stores">
    <thead><tr>
      <th>Store</th><th>Address</th><th>State</th><th class="num">Last heartbeat</th><th class="num">Segments</th><th class="num">Entries</th><th class="num">Bytes</th>
      <th class="num">Updates/s</th><th class="num">Gets/s</th><th class="num">Iterate pages/s</th><th class="num">Scans/s</th>
    </tr></thead>
    <tbody></tbody>
  </table>
  <h2>Tables</h2>
  <div id="scopes"></div>
</main>
<script>
(function () {
  'use strict';
  var refreshMs = 1000;
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells) {
    var tr = document.createElement('tr');
    cells.forEach(function (c) { tr.appendChild(c); });
    return tr;
  }
  function num(v, digits) {
    if (v === undefined || v === null) return '–';
    return Number(v).toLocaleString('en-US', { maximumFractionDigits: digits || 0 });
  }
  function bytes(v) {
    if (v === undefined || v === null) return '–';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v : v.toFixed(1)) + ' ' + units[i];
  }
  function age(ms) {
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s ago';
    var s = Math.floor(ms / 1000);
    if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s ago';
    return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min ago';
  }
  function td(text, cls) { return el('td', text, cls); }
  function stateCell(live) {
    var cell = el('td');
    var b = el('span', live ? 'live' : 'dead', 'badge ' + (live ? 'live' : 'dead'));
    cell.setAttribute('data-state', live ? 'live' : 'dead');
    cell.appendChild(b);
    return cell;
  }
  function rate(s, op) { return s.opsPerSecond ? num(s.opsPerSecond[op], 1) : '–'; }
  function drawStores(stores) {
    var body = document.querySelector('#stores tbody');
    body.textContent = '';
    if (stores.length === 0) {
      var none = td('no segment store has registered', 'muted');
      none.colSpan = 11;
      body.appendChild(row([none]));
    }
    stores.forEach(function (s) {
      var tr = row([
        td(s.id, 'mono'), td(s.address, 'mono'), stateCell(s.live), td(age(s.lastHeartbeatAgeMs), 'num'), td(num(s.segments), 'num'),
        td(num(s.entries), 'num'), td(bytes(s.bytes), 'num'), td(rate(s, 'update'), 'num'), td(rate(s, 'get'), 'num'), td(rate(s, 'iterate'), 'num'), td(rate(s, 'scan'), 'num'),
      ]);
      tr.setAttribute('data-store', s.id);
      if (s.error) tr.title = 'metrics not read: ' + s.error;
      body.appendChild(tr);
    });
  }
  function drawTable(scope, t) {
    var box = el('section', null, 'kvt-table');
    box.setAttribute('data-table', scope + '/' + t.name);
    var h = el('h3');
    h.appendChild(el('span', scope + '/' + t.name, 'mono'));
    h.appendChild(document.createTextNode(' '));
    h.appendChild(el('span', t.state, 'badge ' + t.state));
    h.appendChild(el('span', ' ' + t.partitionCount + ' partition' + (t.partitionCount === 1 ? '' : 's') + ', created ' + new Date(t.createdAtMs).toISOString(), 'muted'));
    box.appendChild(h);
    var table = el('table');
    var head = row(['Partition', 'Hash range', 'Segment', 'Store', 'Address', 'Store state'].map(function (x, i) { return el('th', x, i === 0 ? 'num' : ''); }));
    var thead = el('thead');
    thead.appendChild(head);
    table.appendChild(thead);
    var body = el('tbody');
    t.partitions.forEach(function (p) {
      var tr = row([td(p.index, 'num'), td('[' + +p.hashLow.toPrecision(6) + ', ' + +p.hashHigh.toPrecision(6) + ')', 'mono'), td(p.segment, 'mono'), td(p.storeId, 'mono'), td(p.storeAddress, 'mono'), stateCell(p.storeLive)]);
      tr.setAttribute('data-partition', String(p.index));
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
    return box;
  }
  function drawScopes(scopes) {
    var root = document.getElementById('scopes');
    root.textContent = '';
    if (scopes.length === 0) root.appendChild(el('div', 'no scope yet', 'muted empty'));
    scopes.forEach(function (scope) {
      var section = el('section');
      section.setAttribute('data-scope', scope.name);
      var title = el('div', null, 'scope-title');
      title.appendChild(el('span', 'scope ', 'muted'));
      title.appendChild(el('span', scope.name, 'mono'));
      section.appendChild(title);
      if (scope.tables.length === 0) section.appendChild(el('div', 'no table in this scope', 'muted empty'));
      scope.tables.forEach(function (t) { section.appendChild(drawTable(scope.name, t)); });
      root.appendChild(section);
    });
  }
  function drawSummary(s) {
    var root = document.getElementById('summary');
    root.textContent = '';
    var healthy = s.summary.deadStores === 0 && s.summary.partitionsOnDeadStores === 0;
    var badge = el('span', healthy ? 'healthy' : 'degraded', 'badge ' + (healthy ? 'live' : 'dead'));
    badge.id = 'health';
    root.appendChild(badge);
    root.appendChild(el('span', s.summary.liveStores + ' live, ' + s.summary.deadStores + ' dead stores'));
    root.appendChild(el('span', s.summary.scopes + ' scopes, ' + s.summary.tables + ' tables'));
    root.appendChild(el('span', s.summary.partitionsOnDeadStores + ' partitions on dead stores'));
  }
  function banner(text) {
    var b = document.getElementById('banner');
    b.textContent = text || '';
    b.style.display = text ? 'block' : 'none';
  }
  function refresh() {
    fetch('api/status', { cache: 'no-store' })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json();
      })
      .then(function (s) {
        refreshMs = s.refreshMs || refreshMs;
        drawSummary(s);
        drawStores(s.stores);
        drawScopes(s.scopes);
        banner('');
        var when = new Date(s.generatedAtMs);
        document.getElementById('updated').textContent = 'updated ' + when.toLocaleTimeString() + ' (every ' + refreshMs / 1000 + ' s); a store silent for ' + s.storeTimeoutMs / 1000 + ' s is dead';
        document.body.setAttribute('data-generated-at', String(s.generatedAtMs));
      })
      .catch(function (err) { banner('The controller did not answer: ' + err.message + '. Showing the last known state.'); })
      .then(function () { setTimeout(refresh, refreshMs); });
  }
  refresh();
})();
</script>
</body>
</html>
`;
