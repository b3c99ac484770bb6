// domains.js is the Domains page: add a custom domain, the DNS TXT record
// that proves it, verify, where its root and unknown links redirect,
// delete; the instance admin may mark a domain verified without DNS. Its
// redirects are edited from the domain read fresh.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, count, useAction, useApiForm, useList } from './ui.js';

export function DomainsPage({ me }) {
  const { list, error, setError, reload } = useList('/v1/domains');
  const [notice, setNotice] = useState('');

  // again shows msg with the list read after a change, so the notice
  // never appears before the cards it speaks of.
  const again = async msg => { if (await reload()) setNotice(msg); };
  return html`<h1>Domains</h1>
    <p class="hint">A custom domain serves this workspace's short links on your own hostname, such as go.example.com, once it is verified. Point the hostname at this server in DNS, add it here, create the TXT record shown and verify it.</p>
    <${AddDomain} onCreated=${d => again('Added ' + d.hostname + '. Create its TXT record, then verify it.')} />
    <section aria-labelledby="domains-list">
      <h2 id="domains-list">Domains of this workspace</h2>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading domains…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">No custom domains yet. Add one above; until then links use this server's own address.</p>` : null}
      ${list && list.data.length > 0 ? html`<ul class="domains" id="domains">
        ${list.data.map(d => html`<${DomainCard} key=${d.id + d.updated_at} d=${d} admin=${me && me.admin} onChanged=${again}
          onDeleted=${() => again('Deleted ' + d.hostname + '. The hostname is free again.')} />`)}
      </ul>` : null}
    </section>`;
}

function AddDomain({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { hostname: '' }, form => call('POST', '/v1/domains', { hostname: form.hostname.trim() }), onCreated);
  return html`<section class="card" aria-labelledby="add-domain">
    <h2 id="add-domain">Add a domain</h2>
    <form id="add-domain-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="hostname" label="Hostname" required placeholder="go.example.com" autocomplete="off" value=${form.hostname} onInput=${set} error=${f.hostname}
          hint="The name only: no https://, port or path" />
      </div>
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Adding…' : 'Add domain'}</button>
      <${CopyAsCurl} method="POST" path="/v1/domains" body=${{ hostname: form.hostname.trim() }} /></div>
    </form>
  </section>`;
}

function DomainCard({ d, admin, onChanged, onDeleted }) {
  const { act, busy, error } = useAction();
  const path = '/v1/domains/' + d.id;
  const slug = d.hostname.replace(/[^a-z0-9]/g, '-');

  const verify = () => act(async () => {
    await call('POST', path + '/verify');
    onChanged(d.hostname + ' is verified: it serves this workspace\'s short links.');
  }, 'verify');
  const markVerified = v => act(async () => {
    await call('PATCH', path, { verified: v });
    onChanged(v ? 'Marked ' + d.hostname + ' verified.' : d.hostname + ' no longer serves links.');
  }, 'mark');
  const remove = () => act(async () => {
    await call('DELETE', path);
    onDeleted();
  }, 'delete');

  return html`<li class="card domain" data-domain=${d.hostname} aria-labelledby=${'domain-' + slug}>
    <h3 id=${'domain-' + slug}>${d.hostname} <span class=${'state ' + (d.verified ? 'verified' : 'unverified')}>${d.verified ? 'verified' : 'not verified'}</span></h3>
    <p class="hint">${count(d.links, 'link', 'links')} · added ${fmtDate(d.created_at)}${d.verified ? ' · verified ' + fmtDate(d.verified_at) : ''}</p>
    ${d.verified ? html`<p>It serves this workspace's short links at <code>https://${d.hostname}/…</code>.</p>` : html`<div class="txt">
      <p>Create this DNS record at your DNS provider, then verify. It proves you control the name; until then the hostname serves nothing of this workspace.</p>
      <dl class="record">
        <dt>Type</dt><dd><code>TXT</code></dd>
        <dt>Name</dt><dd><code class="txt-name">${d.verification.name}</code> <${CopyButton} text=${d.verification.name} describe=${'Copy the TXT record name for ' + d.hostname} /></dd>
        <dt>Value</dt><dd><code class="txt-value">${d.verification.value}</code> <${CopyButton} text=${d.verification.value} describe=${'Copy the TXT record value for ' + d.hostname} /></dd>
      </dl>
      <div class="actions"><button type="button" class="verify" disabled=${!!busy} onClick=${verify}>${busy === 'verify' ? 'Looking up the record…' : 'Verify'}</button>
        <${CopyAsCurl} method="POST" path=${path + '/verify'} /></div>
    </div>`}
    ${admin ? html`<div class="admin-verify">
      <p class="hint">${d.verified
        ? 'As the instance admin you can stop serving this domain; its links stay, listed but not redirecting.'
        : 'As the instance admin you can mark it verified without DNS, for a name public DNS cannot answer (such as a homelab\'s internal name).'}</p>
      <div class="actions"><button type="button" class="secondary mark-verified" disabled=${!!busy} onClick=${() => markVerified(!d.verified)}>${d.verified ? 'Mark not verified' : 'Mark verified'}</button>
        <${CopyAsCurl} method="PATCH" path=${path} body=${{ verified: !d.verified }} /></div>
    </div>` : null}
    <${Message} error=${error} />
    <${Redirects} d=${d} slug=${slug} onSaved=${() => onChanged('Saved the redirects of ' + d.hostname + '.')} />
    <div class="actions">
      <${Confirm} label="Delete" busy=${!!busy} question=${d.links > 0
        ? 'Delete ' + d.hostname + '? It still has ' + count(d.links, 'link', 'links') + ', so linkbolt refuses: delete them first.'
        : 'Delete ' + d.hostname + '? It stops serving at once.'} onConfirm=${remove} />
      <${CopyAsCurl} method="DELETE" path=${path} />
    </div>
  </li>`;
}

function redirectsBody(form) {
  return { root_redirect_url: form.root_redirect_url.trim(), not_found_url: form.not_found_url.trim() };
}

// Redirects says where the domain's root and unknown links go; "Edit
// redirects" reads the domain fresh (GET /v1/domains/{id}) and fills the
// form with what the server holds now.
function Redirects({ d, slug, onSaved }) {
  const [open, setOpen] = useState(false);
  const [fresh, setFresh] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!open) return undefined;
    let live = true;
    setFresh(null);
    setError(null);
    call('GET', '/v1/domains/' + d.id).then(x => live && setFresh(x), e => live && setError(e));
    return () => { live = false; };
  }, [open]);
  const shown = fresh || d;
  return html`<div class="redirects-box">
    <dl class="facts redirects-now">
      <dt>Root</dt><dd class="root-now">${shown.root_redirect_url ? html`<code>${shown.root_redirect_url}</code>` : 'a small page'}</dd>
      <dt>Unknown links</dt><dd class="not-found-now">${shown.not_found_url ? html`<code>${shown.not_found_url}</code>` : 'answer 404'}</dd>
    </dl>
    <div class="actions"><button type="button" class="secondary edit-redirects" aria-expanded=${open ? 'true' : 'false'}
      aria-label=${(open ? 'Close the redirects of ' : 'Edit the redirects of ') + d.hostname} onClick=${() => setOpen(!open)}>${open ? 'Close' : 'Edit redirects'}</button></div>
    ${open && error ? html`<${Message} error=${error} />` : null}
    ${open && !fresh && !error ? html`<p role="status">Reading ${d.hostname}…</p>` : null}
    ${open && fresh ? html`<${RedirectsForm} d=${fresh} slug=${slug} onSaved=${onSaved} />
      <${AppLinksForm} d=${fresh} slug=${slug} onSaved=${onSaved} />` : null}
  </div>`;
}

// AppLinksForm sets the files the domain serves so that iOS and Android
// open its links in an app: apple-app-site-association and assetlinks.json.
function AppLinksForm({ d, slug, onSaved }) {
  const text = v => v ? JSON.stringify(v, null, 2) : '';
  const [form, setForm] = useState({ aasa: text(d.apple_app_site_association), assets: text(d.android_asset_links) });
  const [problem, setProblem] = useState({});
  const path = '/v1/domains/' + d.id;
  const parse = (v, field) => {
    if (!v.trim()) return null;
    try { return JSON.parse(v); } catch { throw Object.assign(new Error(field + ' is not JSON.'), { field }); }
  };
  let body = null;
  try {
    body = { apple_app_site_association: parse(form.aasa, 'apple_app_site_association'), android_asset_links: parse(form.assets, 'android_asset_links') };
  } catch { body = null; }
  const { act, busy, error, notice } = useAction();
  const save = e => {
    e.preventDefault();
    setProblem({});
    let b;
    try {
      b = { apple_app_site_association: parse(form.aasa, 'apple_app_site_association'), android_asset_links: parse(form.assets, 'android_asset_links') };
    } catch (err) {
      setProblem({ [err.field]: err.message });
      return;
    }
    act(async () => {
      try {
        const saved = await call('PATCH', path, b);
        onSaved(saved);
        return 'Saved: https://' + d.hostname + '/.well-known/ serves them now.';
      } catch (err) {
        if (err.fields) setProblem(err.fields);
        throw err;
      }
    }, 'save');
  };
  const p = slug + '-';
  return html`<form class="app-links" id=${p + 'app-links'} onSubmit=${save} novalidate>
    <h3>App links</h3>
    <p class="hint">So that phones open these short links in your app: the JSON ${d.hostname} serves at /.well-known/apple-app-site-association (iOS) and /.well-known/assetlinks.json (Android). Empty: none.</p>
    <div class="field"><label for=${p + 'aasa'}>apple-app-site-association (a JSON object)</label>
      <textarea id=${p + 'aasa'} rows="5" spellcheck="false" value=${form.aasa} onInput=${e => { setForm({ ...form, aasa: e.target.value }); setProblem({ ...problem, apple_app_site_association: undefined }); }}
        aria-invalid=${problem.apple_app_site_association ? 'true' : undefined}></textarea>
      ${problem.apple_app_site_association ? html`<small class="field-error">${problem.apple_app_site_association}</small>` : null}</div>
    <div class="field"><label for=${p + 'assets'}>assetlinks.json (a JSON array)</label>
      <textarea id=${p + 'assets'} rows="5" spellcheck="false" value=${form.assets} onInput=${e => { setForm({ ...form, assets: e.target.value }); setProblem({ ...problem, android_asset_links: undefined }); }}
        aria-invalid=${problem.android_asset_links ? 'true' : undefined}></textarea>
      ${problem.android_asset_links ? html`<small class="field-error">${problem.android_asset_links}</small>` : null}</div>
    <${Message} error=${Object.values(problem).some(Boolean) ? null : error} notice=${notice} />
    <div class="actions"><button type="submit" class="secondary" disabled=${!!busy}>${busy ? 'Saving…' : 'Save app links'}</button>
      ${body ? html`<${CopyAsCurl} method="PATCH" path=${path} body=${body} />` : null}</div>
  </form>`;
}

function RedirectsForm({ d, slug, onSaved }) {
  const initial = { root_redirect_url: d.root_redirect_url || '', not_found_url: d.not_found_url || '' };
  const path = '/v1/domains/' + d.id;
  const { form, set, submit, error, busy, fields: f } = useApiForm(initial, form => call('PATCH', path, redirectsBody(form)), onSaved);
  const p = slug + '-';
  const setField = e => set({ target: { name: e.target.name.slice(p.length), value: e.target.value } });
  return html`<form class="redirects" id=${p + 'redirects'} onSubmit=${submit} novalidate>
    <div class="row">
      <${Field} id=${p + 'root_redirect_url'} label="Root redirect URL" type="url" placeholder="https://example.com/" value=${form.root_redirect_url} onInput=${setField}
        error=${f.root_redirect_url} hint=${'Where https://' + d.hostname + '/ goes; empty shows a small page'} />
      <${Field} id=${p + 'not_found_url'} label="Not-found URL" type="url" placeholder="https://example.com/not-found" value=${form.not_found_url} onInput=${setField}
        error=${f.not_found_url} hint="Where an unknown short link goes; empty answers 404" />
    </div>
    ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
    <div class="actions"><button type="submit" class="secondary" disabled=${busy}>${busy ? 'Saving…' : 'Save redirects'}</button>
      <${CopyAsCurl} method="PATCH" path=${path} body=${redirectsBody(form)} /></div>
  </form>`;
}
