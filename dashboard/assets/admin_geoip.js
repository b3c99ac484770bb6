// admin_geoip.js: the Admin page's section of the country database that
// gives clicks and link rules their country (GET /v1/admin/geoip): where
// it comes from, its version, date and licence.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, fmtDate } from './ui.js';

const sources = {
  embedded: 'inside linkbolt',
  installed: 'installed in the data folder (linkbolt geoip update)',
  file: 'analytics.geoip_path',
};

export function CountryDatabase() {
  const [geo, setGeo] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { call('GET', '/v1/admin/geoip').then(setGeo, setError); }, []);
  return html`<section aria-labelledby="geoip-title" class="card">
    <h2 id="geoip-title">Country database</h2>
    <${Message} error=${error} />
    ${!geo && !error ? html`<p role="status">Loading the country database…</p>` : null}
    ${geo && !geo.enabled ? html`<p id="geoip-off">Off (analytics.geoip: off): every click's country is unknown and no country rule matches.</p>` : null}
    ${geo && geo.enabled ? html`<dl class="facts" id="geoip">
      <dt>Source</dt><dd data-geoip="source">${sources[geo.source] || geo.source}</dd>
      ${geo.path ? html`<dt>File</dt><dd><code>${geo.path}</code></dd>` : null}
      ${geo.package ? html`<dt>Package</dt><dd data-geoip="package">${geo.package} ${geo.version}</dd>` : null}
      <dt>Type</dt><dd>${geo.database_type || '—'}</dd>
      <dt>Built</dt><dd data-geoip="built">${geo.built_at ? fmtDate(geo.built_at) : '—'}</dd>
      ${geo.license ? html`<dt>Licence</dt><dd data-geoip="license">${geo.license}${geo.attribution ? ' — ' + geo.attribution : ''}</dd>` : null}
    </dl>
    <p class="hint">Install a newer MaxMind-format database with <code>linkbolt geoip update --from FILE</code>; the server uses it within a minute.</p>` : null}
  </section>`;
}
