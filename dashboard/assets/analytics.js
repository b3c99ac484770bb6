// analytics.js is the Analytics page: the clicks of the workspace, or of one
// link (/app/analytics?link=<id>), in a range: totals, a chart, top lists,
// and exports.
import { html, useState, useEffect, useRef } from './vendor/htm-preact-standalone.js';
import uPlot from './vendor/uPlot.esm.js';
import { ApiError, call, fetchFile, saveFile, stream } from './api.js';
import { Message, fmtNumber, fmtDate, useAction } from './ui.js';
import { OrphanVisits } from './orphans.js';

const RANGES = [
  ['today', 'Today'], ['yesterday', 'Yesterday'], ['24h', 'Last 24 hours'], ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'], ['90d', 'Last 90 days'], ['all', 'All time'], ['custom', 'Custom…'],
];
const TOPS = [
  ['links', 'Links'], ['referrers', 'Referrers'], ['countries', 'Countries'],
  ['devices', 'Devices'], ['browsers', 'Browsers'], ['os', 'Operating systems'],
];

export function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { return 'UTC'; }
}

function zones(current) {
  let list = [];
  try { list = Intl.supportedValuesOf('timeZone'); } catch { /* older browsers: the current zone and UTC */ }
  for (const z of ['UTC', current]) if (!list.includes(z)) list = [z, ...list];
  return list;
}

function linkParam() {
  return new URLSearchParams(location.search).get('link') || '';
}

// rangeQuery turns the picker's choice into the API's range parameters.
export function rangeQuery(q) {
  const p = new URLSearchParams();
  if (q.range === 'custom') {
    p.set('start', new Date(q.start).toISOString());
    p.set('end', new Date(q.end).toISOString());
  } else {
    p.set('range', q.range);
  }
  p.set('tz', q.tz);
  if (q.interval) p.set('interval', q.interval);
  if (q.exclude_bots) p.set('exclude_bots', 'true');
  return p;
}

// orphanParams are the range parameters of the orphan visits (which have
// no bots filter).
function orphanParams(query) {
  const p = rangeQuery(query);
  p.delete('exclude_bots');
  return p;
}

export function AnalyticsPage() {
  const [link, setLink] = useState(linkParam());
  const [query, setQuery] = useState({ range: '30d', start: '', end: '', tz: browserZone(), interval: '', exclude_bots: false });
  const [data, setData] = useState(null);
  const [info, setInfo] = useState(null);
  const [error, setError] = useState(null);

  useEffect(() => {
    const onPop = () => setLink(linkParam());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    setInfo(null);
    if (!link) return undefined;
    let live = true;
    call('GET', '/v1/links/' + encodeURIComponent(link)).then(l => live && setInfo(l), () => { /* the analytics call says why */ });
    return () => { live = false; };
  }, [link]);

  const ready = query.range !== 'custom' || (query.start && query.end);
  useEffect(() => {
    if (!ready) return undefined;
    let live = true;
    setError(null);
    setData(null);
    const path = link ? '/v1/analytics/links/' + encodeURIComponent(link) : '/v1/analytics/workspace';
    call('GET', path + '?' + rangeQuery(query)).then(d => live && setData(d), e => live && setError(e));
    return () => { live = false; };
  }, [query, link]);

  const fields = (error && error.fields) || {};
  return html`<h1>Analytics${link ? html` · <span class="an-subject">${info ? info.short_url.replace(/^https?:\/\//, '') : link}</span>` : null}</h1>
    ${link ? html`<p><a href="/app/analytics" id="workspace-analytics">← Analytics of the whole workspace</a>${info ? html` · to ${info.destination_url}` : null}</p>` : null}
    <${Picker} query=${query} setQuery=${setQuery} fields=${fields} />
    <${Message} error=${Object.keys(fields).length ? null : error} />
    ${Object.keys(fields).length ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
    ${!data && !error && ready ? html`<p role="status">Loading analytics…</p>` : null}
    ${!ready ? html`<p class="empty">Choose the start and end of the range.</p>` : null}
    ${data ? html`<${Report} data=${data} link=${link} variants=${info && info.variants} />` : null}
    <${LiveClicks} link=${link} key=${link} />
    ${!link && ready ? html`<${OrphanVisits} path="/v1/analytics/orphan-visits" params=${orphanParams(query)} />` : null}
    <${Export} query=${query} ready=${ready} link=${link} />`;
}

export function Picker({ query, setQuery, fields }) {
  const set = e => {
    const t = e.target;
    setQuery({ ...query, [t.name]: t.type === 'checkbox' ? t.checked : t.value });
  };
  return html`<form id="analytics-range" class="card an-picker" onSubmit=${e => e.preventDefault()}>
    <div class="row">
      <div class="field"><label for="an-range">Range</label>
        <select id="an-range" name="range" value=${query.range} onChange=${set}>
          ${RANGES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select></div>
      ${query.range === 'custom' ? html`
        <div class="field"><label for="an-start">Start</label>
          <input id="an-start" name="start" type="datetime-local" value=${query.start} onChange=${set} aria-invalid=${fields.start ? 'true' : undefined} aria-describedby=${fields.start ? 'an-start-error' : undefined} />
          ${fields.start ? html`<small id="an-start-error" class="field-error">${fields.start}</small>` : null}</div>
        <div class="field"><label for="an-end">End</label>
          <input id="an-end" name="end" type="datetime-local" value=${query.end} onChange=${set} aria-invalid=${fields.end ? 'true' : undefined} aria-describedby=${fields.end ? 'an-end-error' : undefined} />
          ${fields.end ? html`<small id="an-end-error" class="field-error">${fields.end}</small>` : null}</div>` : null}
      <div class="field"><label for="an-tz">Time zone</label>
        <select id="an-tz" name="tz" value=${query.tz} onChange=${set} aria-invalid=${fields.tz ? 'true' : undefined}>
          ${zones(query.tz).map(z => html`<option value=${z}>${z}</option>`)}
        </select>
        ${fields.tz ? html`<small class="field-error">${fields.tz}</small>` : null}</div>
      <div class="field"><label for="an-interval">Interval</label>
        <select id="an-interval" name="interval" value=${query.interval} onChange=${set} aria-invalid=${fields.interval ? 'true' : undefined}>
          <option value="">Automatic</option><option value="hour">Hour</option><option value="day">Day</option>
        </select>
        ${fields.interval ? html`<small class="field-error">${fields.interval}</small>` : null}</div>
    </div>
    <label class="an-check"><input type="checkbox" id="an-bots" name="exclude_bots" checked=${query.exclude_bots} onChange=${set} /> Exclude bots</label>
  </form>`;
}

export function Report({ data, link, variants }) {
  const t = data.totals;
  const r = data.range;
  return html`<section aria-labelledby="an-totals-h">
      <h2 id="an-totals-h" class="visually-hidden">Totals</h2>
      <p class="an-range">${fmtDate(r.start)} – ${fmtDate(r.end)} (${r.tz}, by ${r.interval})</p>
      <dl class="an-totals" id="an-totals">
        <div><dt>Clicks</dt><dd id="an-clicks">${fmtNumber(t.clicks)}</dd></div>
        <div><dt>Bot clicks</dt><dd id="an-bot-clicks">${fmtNumber(t.bot_clicks)}</dd></div>
        <div><dt>Unique visitors</dt><dd id="an-visitors">${fmtNumber(t.unique_visitors)}</dd></div>
      </dl>
    </section>
    <section aria-labelledby="an-chart-h" class="card">
      <h2 id="an-chart-h">Clicks by ${r.interval}</h2>
      ${t.clicks === 0 && t.bot_clicks === 0 ? html`<p class="empty" id="an-empty">No clicks in this range.</p>` : null}
      <${Chart} points=${data.timeseries} tz=${r.tz} />
    </section>
    ${link && ((variants && variants.length) || (data.top.variants && data.top.variants.length)) ? html`<${Variants} variants=${variants || []} rows=${data.top.variants || []} other=${data.top_other.variants || 0} />` : null}
    <section aria-labelledby="an-top-h">
      <h2 id="an-top-h">Top lists</h2>
      <div class="an-tops">${TOPS.filter(([k]) => !link || k !== 'links').map(([k, label]) => html`<${Top} key=${k} name=${k} label=${label} rows=${data.top[k]} other=${data.top_other[k]} />`)}</div>
    </section>`;
}

// Variants reads a link's A/B test: each variant's clicks and share of
// the clicks sent to a variant, in the link's order, then the numbers the
// link no longer has, then the clicks sent to none.
function Variants({ variants, rows, other }) {
  const clicks = new Map(rows.map(e => [e.value, e.clicks]));
  const total = rows.reduce((n, e) => n + e.clicks, 0);
  const list = variants.map((v, i) => ({ n: String(i + 1), dest: v.destination_url, weight: v.weight }));
  for (const e of rows) if (Number(e.value) > variants.length) list.push({ n: e.value, dest: e.destination_url || '', weight: null });
  const share = n => total > 0 ? Math.round(n * 1000 / total) / 10 + ' %' : '–';
  return html`<section aria-labelledby="an-variants-h" class="card">
    <h2 id="an-variants-h">A/B test</h2>
    <div class="table-wrap"><table id="top-variants" aria-labelledby="an-variants-h">
      <thead><tr><th scope="col">Variant</th><th scope="col" class="num">Clicks</th><th scope="col" class="num">Share</th></tr></thead>
      <tbody>${list.map(v => html`<tr>
        <td class="an-dest"><span class="an-variant-n">${v.n}</span> ${v.dest || 'no longer in the link'}<br /><span class="hint">${v.weight == null ? 'not in the split now' : 'weight ' + v.weight + ' %'}</span></td>
        <td class="num">${fmtNumber(clicks.get(v.n) || 0)}</td>
        <td class="num">${share(clicks.get(v.n) || 0)}</td></tr>`)}
        ${other > 0 ? html`<tr class="an-other"><td>In no variant (rules, preview bots, before the test)</td><td class="num">${fmtNumber(other)}</td><td></td></tr>` : null}
      </tbody></table></div>
  </section>`;
}

function Top({ name, label, rows, other }) {
  return html`<div class="an-top">
    <h3 id=${'an-top-' + name}>${label}</h3>
    ${rows.length === 0 ? html`<p class="empty">No clicks.</p>` : html`<div class="table-wrap"><table id=${'top-' + name} aria-labelledby=${'an-top-' + name}>
      <thead><tr><th scope="col">${name === 'links' ? 'Link' : 'Value'}</th><th scope="col" class="num">Clicks</th></tr></thead>
      <tbody>${rows.map(e => html`<tr>
        <td>${name === 'links' ? (e.short_url ? html`<a href=${'/app/analytics?link=' + encodeURIComponent(e.value)}>${e.short_url.replace(/^https?:\/\//, '')}</a>` : html`${e.value} (deleted)`) : e.value}</td>
        <td class="num">${fmtNumber(e.clicks)}</td></tr>`)}
        ${other > 0 ? html`<tr class="an-other"><td>Others</td><td class="num">${fmtNumber(other)}</td></tr>` : null}
      </tbody></table></div>`}
  </div>`;
}

// Chart draws the timeseries with uPlot on a canvas, in the range's time
// zone; the numbers are also in a table for screen readers.
function Chart({ points, tz }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    const css = getComputedStyle(document.documentElement);
    const color = (css.getPropertyValue('--accent') || '#1f5fd1').trim();
    const muted = (css.getPropertyValue('--muted') || '#5a6270').trim();
    const line = (css.getPropertyValue('--line') || '#d7dbe0').trim();
    const xs = points.map(p => Date.parse(p.start) / 1000);
    const ys = points.map(p => p.clicks);
    const axis = { stroke: muted, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
    const opts = {
      width: Math.max(200, el.clientWidth),
      height: 240,
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), tz),
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { y: { range: (u, min, max) => [0, Math.max(1, max)] } },
      axes: [axis, { ...axis, values: (u, vals) => vals.map(v => Number.isInteger(v) ? fmtNumber(v) : '') }],
      series: [{}, { label: 'Clicks', stroke: color, width: 2, fill: color + '22', points: { show: points.length <= 60 } }],
    };
    const plot = new uPlot(opts, [xs, ys], el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 240 }));
    resize.observe(el);
    return () => { resize.disconnect(); plot.destroy(); };
  }, [points, tz]);
  const total = points.reduce((s, p) => s + p.clicks, 0);
  return html`<div ref=${box} class="an-chart" id="an-chart" role="img" aria-label=${'Chart of ' + fmtNumber(total) + ' clicks over ' + points.length + ' periods'}></div>`;
}

// LiveClicks shows the clicks of the workspace (or of one link) as they
// come, from GET /v1/events/stream, while the person watches: the latest
// LIVE_ROWS, newest first, with the count since watching began.
const LIVE_ROWS = 50;

// LIVE_START_MS is how long a stream may take to say it is ready (its
// first event) before the page gives up on it: a proxy that holds
// responses back until they end would otherwise leave it "Connecting…"
// for ever. window.linkboltLiveStartMs overrides it (the browser tests).
const LIVE_START_MS = 15000;

function LiveClicks({ link }) {
  const [on, setOn] = useState(false);
  const [rows, setRows] = useState([]);
  const [seen, setSeen] = useState(0);
  const [dropped, setDropped] = useState(0);
  const [status, setStatus] = useState('');
  const [error, setError] = useState(null);
  const [aliases, setAliases] = useState({});
  const asked = useRef(new Set());
  useEffect(() => {
    if (!on) return undefined;
    const ctl = new AbortController();
    setError(null);
    setStatus('Connecting…');
    let started = false;
    const wait = window.linkboltLiveStartMs || LIVE_START_MS;
    const timer = setTimeout(() => {
      if (started) return;
      ctl.abort();
      setOn(false);
      setStatus('');
      setError(new ApiError(0, { detail: 'The live stream did not start within ' + (wait < 2000 ? '1 second' : Math.round(wait / 1000) + ' seconds') + ': a proxy between you and linkbolt may be holding it back until it ends (see “Live clicks” in the analytics docs). Watch again to retry.' }));
    }, wait);
    const onEvent = (name, data) => {
      if (!started) { started = true; clearTimeout(timer); }
      if (name === 'ready') setStatus('Watching: clicks appear here within about a second.');
      else if (name === 'click') {
        setSeen(n => n + 1);
        setRows(r => [data, ...r].slice(0, LIVE_ROWS));
        if (!link && !asked.current.has(data.link_id) && asked.current.size < 500) {
          asked.current.add(data.link_id);
          call('GET', '/v1/links/' + encodeURIComponent(data.link_id))
            .then(l => setAliases(a => ({ ...a, [l.id]: l.short_url.replace(/^https?:\/\//, '') })), () => { /* deleted: its ID stays */ });
        }
      } else if (name === 'dropped') setDropped(n => n + data.dropped);
      else if (name === 'end') setStatus('Stopped: ' + data.reason + '.');
    };
    const path = '/v1/events/stream' + (link ? '?link_id=' + encodeURIComponent(link) : '');
    stream(path, onEvent, ctl.signal).then(() => {
      clearTimeout(timer);
      if (!ctl.signal.aborted) { setOn(false); setStatus(s => s.startsWith('Stopped') ? s : 'The server ended the stream. Watch again to reconnect.'); }
    }, e => { clearTimeout(timer); if (!ctl.signal.aborted) { setOn(false); setStatus(''); setError(e); } });
    return () => { clearTimeout(timer); ctl.abort(); };
  }, [on, link]);
  const time = t => new Date(t).toLocaleTimeString();
  return html`<section aria-labelledby="an-live-h" class="card" id="an-live">
    <h2 id="an-live-h">Live clicks</h2>
    <p class="hint">${link ? 'This link’s' : 'The workspace’s'} clicks as they happen, from every visitor, while this page is open. Nothing is stored by watching.</p>
    <div class="actions">
      <button type="button" id="an-live-toggle" class=${on ? 'secondary' : ''} aria-pressed=${on} onClick=${() => { if (!on) { setRows([]); setSeen(0); setDropped(0); setStatus(''); } setOn(!on); }}>${on ? 'Stop watching' : 'Watch live'}</button>
      ${on || seen ? html`<span id="an-live-count" role="status">${fmtNumber(seen)} ${seen === 1 ? 'click' : 'clicks'}${dropped ? ' · ' + fmtNumber(dropped) + ' not shown (too many at once)' : ''}</span>` : null}
    </div>
    ${status ? html`<p id="an-live-status" class="hint" role="status">${status}</p>` : null}
    <${Message} error=${error} />
    ${rows.length ? html`<div class="table-wrap"><table id="an-live-clicks" aria-labelledby="an-live-h">
      <thead><tr><th scope="col">Time</th>${link ? null : html`<th scope="col">Link</th>`}<th scope="col">Country</th><th scope="col">Device</th><th scope="col">Browser</th><th scope="col">OS</th><th scope="col">Referrer</th></tr></thead>
      <tbody>${rows.map(c => html`<tr>
        <td>${time(c.time)}</td>
        ${link ? null : html`<td><a href=${'/app/analytics?link=' + encodeURIComponent(c.link_id)}>${aliases[c.link_id] || c.link_id}</a></td>`}
        <td>${c.country}</td><td>${c.device}${c.bot ? html` <span class="badge">bot</span>` : null}</td><td>${c.browser}</td><td>${c.os}</td><td>${c.referrer}</td></tr>`)}
      </tbody></table></div>` : on ? html`<p class="empty">No clicks since you started watching.</p>` : null}
  </section>`;
}

// save hands a blob to the browser as a download named name.

// Export downloads from /v1/analytics/export with the session token (a
// plain link could not send it): the workspace's, or one link's or one
// campaign's (link_id, campaign_id), narrowed by the server.
export function Export({ query, ready, link, campaign }) {
  const { act, busy, error, notice } = useAction();
  const kinds = [['clicks', 'csv', 'Clicks (CSV)'], ['clicks', 'json', 'Clicks (JSON)'], ['timeseries', 'csv', 'Timeseries (CSV)'], ['top', 'csv', 'Top lists (CSV)']];
  const run = (data, format) => act(async () => {
    const p = rangeQuery(query);
    p.set('data', data);
    p.set('format', format);
    if (link) p.set('link_id', link);
    else if (campaign) p.set('campaign_id', campaign);
    const res = await fetchFile('/v1/analytics/export?' + p);
    const text = await res.text();
    const rows = format === 'json' ? JSON.parse(text).length : Math.max(0, text.split('\n').filter(Boolean).length - 1);
    const name = 'linkbolt-' + (link || campaign ? (link || campaign) + '-' : '') + data + '-' + (query.range === 'custom' ? 'custom' : query.range) + '.' + format;
    saveFile(new Blob([text], { type: format === 'json' ? 'application/json' : 'text/csv' }), name);
    return 'Saved ' + name + ' (' + fmtNumber(rows) + (rows === 1 ? ' row' : ' rows') + ').';
  }, 'export');
  return html`<section aria-labelledby="an-export-h" class="card">
    <h2 id="an-export-h">Export</h2>
    <p class="hint">${link ? 'This link’s' : campaign ? 'This campaign’s' : 'The workspace’s'} raw clicks, timeseries or top lists of the range; raw clicks are kept for the analytics retention (90 days by default).</p>
    <div class="actions" id="an-export">${kinds.map(([d, f, label]) => html`<button type="button" class="secondary" data-export=${d + '.' + f} disabled=${!!busy || !ready} onClick=${() => run(d, f)}>${label}</button>`)}</div>
    <${Message} error=${error} notice=${notice} />
  </section>`;
}
