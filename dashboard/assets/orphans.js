// orphans.js: the card "Visits that found no link" (orphan visits): on the
// Analytics page for the workspace's verified domains
// (GET /v1/analytics/orphan-visits), on the Admin page for the primary
// host (GET /v1/admin/orphan-visits). Totals by type, the top paths, and
// the latest kept visits, paged.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, fmtNumber, fmtDate } from './ui.js';

const TYPES = [
  ['base_url', 'Root (/)'], ['invalid_short_url', 'Unknown code'], ['regular_404', 'Other 404'],
];

// OrphanVisits shows the orphan visits of path (the API route) over the
// range of query (rangeQuery's parameters, a URLSearchParams).
export function OrphanVisits({ path, params, admin }) {
  const [domain, setDomain] = useState('');
  const [data, setData] = useState(null);
  const [pages, setPages] = useState(['']);
  const [error, setError] = useState(null);
  const cursor = pages[pages.length - 1];
  const query = params.toString();

  useEffect(() => { setPages(['']); }, [query, domain]);
  useEffect(() => {
    let live = true;
    const p = new URLSearchParams(query);
    if (domain) p.set('domain', domain);
    p.set('limit', '10');
    if (cursor) p.set('cursor', cursor);
    setError(null);
    call('GET', path + '?' + p).then(d => live && setData(d), e => live && setError(e));
    return () => { live = false; };
  }, [path, query, domain, cursor]);

  const none = data && !admin && data.domains.length === 0;
  return html`<section aria-labelledby="orphans-h" class="card" id="orphans">
    <h2 id="orphans-h">Visits that found no link</h2>
    <p class="hint">${admin
      ? 'Visits to this instance\'s own host that found no link: its root, unknown codes and other missing paths.'
      : 'Visits to your custom domains that found no link: the root, unknown codes and other missing paths.'}</p>
    <${Message} error=${error} />
    ${!data && !error ? html`<p role="status">Loading visits that found no link…</p>` : null}
    ${none ? html`<p class="empty" id="orphans-none">Visits that find no link are counted for verified custom domains; this workspace has none.</p>` : null}
    ${data && !none ? html`
      ${data.domains.length > 1 ? html`<label>Domain <select id="orphans-domain" value=${data.domain} onChange=${e => setDomain(e.target.value)}>
        ${data.domains.map(d => html`<option value=${d}>${d}</option>`)}</select></label>` : null}
      <dl class="facts" id="orphans-totals">
        <dt>${admin ? 'Host' : 'Domain'}</dt><dd>${data.domain || location.host}</dd>
        <dt>All</dt><dd data-orphans="visits">${fmtNumber(data.totals.visits)}</dd>
        ${TYPES.map(([t, label]) => html`<dt>${label}</dt><dd data-orphans=${t}>${fmtNumber(data.totals[t])}</dd>`)}
      </dl>
      ${data.top.paths.length ? html`<h3 id="orphans-top-h">Top paths</h3>
        <div class="table-wrap"><table id="orphans-top" aria-labelledby="orphans-top-h">
          <thead><tr><th scope="col">Path</th><th scope="col" class="num">Visits</th></tr></thead>
          <tbody>${data.top.paths.map(e => html`<tr><td><code>${e.value}</code></td><td class="num">${fmtNumber(e.visits)}</td></tr>`)}</tbody>
        </table></div>` : null}
      <h3 id="orphans-latest-h">Latest</h3>
      ${data.visits.length === 0 ? html`<p class="empty">No visits that found no link in this range.</p>` : html`
        <div class="table-wrap"><table id="orphans-visits" aria-labelledby="orphans-latest-h">
          <thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Path</th><th scope="col">Referrer</th><th scope="col">Country</th><th scope="col">Browser</th></tr></thead>
          <tbody>${data.visits.map(v => html`<tr>
            <td>${fmtDate(v.time)}</td>
            <td>${(TYPES.find(t => t[0] === v.type) || [0, v.type])[1]}</td>
            <td><code>${v.path}</code></td>
            <td>${v.referrer}</td>
            <td>${v.country}</td>
            <td>${v.browser}${v.bot ? ' (bot)' : ''}</td></tr>`)}</tbody>
        </table></div>
        <p>${pages.length > 1 ? html`<button type="button" id="orphans-newer" onClick=${() => setPages(pages.slice(0, -1))}>Newer</button> ` : null}
          ${data.next_cursor ? html`<button type="button" id="orphans-older" onClick=${() => setPages([...pages, data.next_cursor])}>Older</button>` : null}</p>`}` : null}
  </section>`;
}
