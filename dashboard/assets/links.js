// links.js is the Links page: search, paging, create, delete, copy.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, fmtNumber, count, useApiForm } from './ui.js';
import { QRButton } from './qr.js';

const LIMIT = 20;

export function LinksPage() {
  const [query, setQuery] = useState({ search: '', page: 1 });
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let live = true;
    setError(null);
    const q = new URLSearchParams({ limit: LIMIT, page: query.page });
    if (query.search) q.set('search', query.search);
    call('GET', '/v1/links?' + q).then(l => live && setList(l), e => live && setError(e));
    return () => { live = false; };
  }, [query, reload]);

  const remove = async l => {
    try {
      await call('DELETE', '/v1/links/' + l.id);
      setNotice('Deleted ' + l.short_url + '.');
      setReload(n => n + 1);
    } catch (e) {
      setError(e);
    }
  };

  const pages = list ? Math.max(1, Math.ceil(list.meta.total / list.meta.limit)) : 1;
  return html`<h1>Links</h1>
    <${CreateLink} onCreated=${l => { setNotice('Created ' + l.short_url + '.'); setQuery({ ...query, page: 1 }); setReload(n => n + 1); }} />
    <section aria-labelledby="links-list">
      <h2 id="links-list">Your links</h2>
      <form class="inline" role="search" onSubmit=${e => { e.preventDefault(); setQuery({ search: new FormData(e.target).get('search').trim(), page: 1 }); }}>
        <label for="search">Search</label>
        <input id="search" name="search" type="search" placeholder="alias, destination or tag" value=${query.search} />
        <button type="submit" class="secondary">Search</button>
      </form>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading links…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">${query.search ? 'No link matches “' + query.search + '”.' : 'No links yet. Create the first one above.'}</p>` : null}
      ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="links">
        <thead><tr><th scope="col">Short URL</th><th scope="col">Destination</th><th scope="col">Tags</th><th scope="col" class="num">Clicks</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${list.data.map(l => html`<tr key=${l.id} data-alias=${l.alias}>
          <td><a href=${l.short_url} target="_blank" rel="noopener noreferrer">${l.short_url.replace(/^https?:\/\//, '')}</a> <${CopyButton} text=${l.short_url} label="Copy" describe=${'Copy short URL ' + l.short_url} /></td>
          <td class="dest" title=${l.destination_url}>${l.destination_url}</td>
          <td>${(l.tags || []).map(t => html`<span class="tag">${t}</span>`)}</td>
          <td class="num">${fmtNumber(l.clicks)}</td>
          <td class="when">${fmtDate(l.created_at)}</td>
          <td><a href=${'/app/analytics?link=' + l.id} aria-label=${'Analytics of ' + l.alias}>Analytics</a> <${QRButton} link=${l} /> <${Confirm} label="Delete" question=${'Delete ' + l.alias + '? Its short URL stops working.'} onConfirm=${() => remove(l)} /></td>
        </tr>`)}</tbody>
      </table></div>
      <nav class="pager" aria-label="Pages of links">
        <button type="button" class="secondary" disabled=${query.page <= 1} onClick=${() => setQuery({ ...query, page: query.page - 1 })}>Previous</button>
        <span>Page ${query.page} of ${pages} · ${count(list.meta.total, 'link', 'links')}${list.meta.search_truncated ? ' (search stopped at the newest links scanned)' : ''}</span>
        <button type="button" class="secondary" disabled=${query.page >= pages} onClick=${() => setQuery({ ...query, page: query.page + 1 })}>Next</button>
      </nav>` : null}
    </section>`;
}

function linkBody(form) {
  const body = { destination_url: form.destination_url };
  if (form.alias.trim()) body.alias = form.alias.trim();
  const tags = form.tags.split(',').map(t => t.trim()).filter(Boolean);
  if (tags.length) body.tags = tags;
  return body;
}

function CreateLink({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { destination_url: '', alias: '', tags: '' }, form => call('POST', '/v1/links', linkBody(form)), onCreated);
  const body = linkBody(form);
  return html`<section aria-labelledby="create-link" class="card">
    <h2 id="create-link">Create a link</h2>
    <form id="create-link-form" onSubmit=${submit} novalidate>
      <${Field} id="destination_url" label="Destination URL" type="url" required placeholder="https://example.com/page" value=${form.destination_url} onInput=${set} error=${f.destination_url} />
      <div class="row">
        <${Field} id="alias" label="Alias (optional)" placeholder="made up when empty" value=${form.alias} onInput=${set} error=${f.alias} />
        <${Field} id="tags" label="Tags (comma separated, optional)" value=${form.tags} onInput=${set} error=${f.tags || Object.keys(f).filter(k => k.startsWith('tags[')).map(k => f[k]).join(' ') || undefined} />
      </div>
      ${error && Object.keys(error.fields).length === 0 ? html`<${Message} error=${error} />` : null}
      ${error && Object.keys(error.fields).length > 0 ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create link'}</button>
      <${CopyAsCurl} method="POST" path="/v1/links" body=${body} /></div>
    </form>
  </section>`;
}
