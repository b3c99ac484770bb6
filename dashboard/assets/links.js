// links.js is the Links page: the workspace's links with search, tag,
// campaign and domain filters, sorting by created or clicks and paging,
// all kept in the page's URL (/app/links?tag=promo&sort=clicks) so that a
// reload or a shared address shows the same list and Back works; create
// and edit with every field of a link; delete; copy the short URL.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, fmtNumber, count, useApiForm, useList } from './ui.js';
import { QRButton } from './qr.js';
import { useTagInfo, chipProps } from './tags.js';
import { BulkCreate } from './bulk.js';
import { TargetingFields, TARGETING_EMPTY, targetingFormOf, targetingBody } from './link_targeting.js';
import { LimitsFields, limitsForm, limitsBody, LIMITS_EMPTY, readArchived, ArchivedFilter } from './link_limits.js';

const LIMIT = 20;
const CODES = [
  ['302', '302 Found (temporary, the default)'],
  ['301', '301 Moved Permanently'],
  ['307', '307 Temporary Redirect'],
  ['308', '308 Permanent Redirect'],
];
const UTM = [['utm_source', 'UTM source', 'newsletter'], ['utm_medium', 'UTM medium', 'email'], ['utm_campaign', 'UTM campaign', 'spring-sale']];
const ANY = '*'; // the domain filter's "any domain" (no hostname is "*")

// readView reads the list's view from the page's URL: search, tag (one or
// several, comma separated), campaign (an ID), domain (absent: any; empty:
// the primary host; else a hostname), sort and page.
function readView() {
  const q = new URLSearchParams(location.search);
  const page = parseInt(q.get('page'), 10);
  return {
    search: q.get('search') || '',
    tag: q.get('tag') || '',
    campaign: q.get('campaign') || '',
    domain: q.has('domain') ? q.get('domain') : ANY,
    sort: q.get('sort') === 'clicks' ? 'clicks' : 'created',
    page: page > 0 ? page : 1,
    archived: readArchived(q),
    broken: q.get('broken') === 'true',
  };
}

// viewQuery is the page's URL query for a view, without the defaults.
function viewQuery(v) {
  const q = new URLSearchParams();
  if (v.search) q.set('search', v.search);
  if (v.tag) q.set('tag', v.tag);
  if (v.campaign) q.set('campaign', v.campaign);
  if (v.domain !== ANY) q.set('domain', v.domain);
  if (v.sort === 'clicks') q.set('sort', 'clicks');
  if (v.archived !== 'false') q.set('archived', v.archived);
  if (v.broken) q.set('broken', 'true');
  if (v.page > 1) q.set('page', v.page);
  return q.toString();
}

// listPath is the API request for a view: GET /v1/links with its filters.
function listPath(v) {
  const q = new URLSearchParams({ limit: LIMIT, page: v.page });
  if (v.search) q.set('search', v.search);
  if (v.tag) q.set('tags', v.tag);
  if (v.campaign) q.set('campaign_id', v.campaign);
  if (v.domain !== ANY) q.set('domain', v.domain);
  if (v.sort === 'clicks') q.set('sort', 'clicks');
  if (v.archived !== 'false') q.set('archived', v.archived);
  if (v.broken) q.set('broken', 'true');
  return '/v1/links?' + q;
}

const filtered = v => !!(v.search || v.tag || v.campaign || v.domain !== ANY || v.archived !== 'false' || v.broken);

// shownWorkspace is the workspace whose links the page showed last: after a
// switch to another one the view starts afresh (its campaigns and domains
// are not the other's), while a reload or a shared address keeps it.
let shownWorkspace = null;

function startView(workspace) {
  const ws = workspace ? workspace.id : '';
  if (shownWorkspace !== null && shownWorkspace !== ws && location.search) history.replaceState(null, '', '/app/links');
  shownWorkspace = ws;
  return readView();
}

export function LinksPage({ workspace }) {
  const [view, setView] = useState(() => startView(workspace));
  const [answer, setAnswer] = useState(null); // the list read, with the query it answers
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  const [editing, setEditing] = useState(null); // the link being edited
  const campaigns = useList('/v1/campaigns');
  const domains = useList('/v1/domains');
  const templates = useList('/v1/utm-templates');
  const tagInfo = useTagInfo();

  // Back and Forward show the view of their address.
  useEffect(() => {
    const onPop = () => setView(readView());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  const query = viewQuery(view);
  useEffect(() => {
    let live = true;
    setError(null);
    call('GET', listPath(view)).then(l => live && setAnswer({ ...l, query }), e => live && setError(e));
    return () => { live = false; };
  }, [query, reload]);

  // go shows another view and puts it in the address (a new history
  // entry); the same view is read again.
  const go = v => {
    const q = viewQuery(v);
    setNotice('');
    if (q === query) {
      setReload(n => n + 1);
      return;
    }
    history.pushState(null, '', '/app/links' + (q ? '?' + q : ''));
    setView(v);
  };

  const remove = async l => {
    setError(null);
    try {
      await call('DELETE', '/v1/links/' + l.id);
      if (editing && editing.id === l.id) setEditing(null);
      setNotice('Deleted ' + l.short_url + '.');
      setReload(n => n + 1);
    } catch (e) {
      setError(e);
    }
  };

  // Rows ticked for a bulk action: the links of the list shown.
  const [selected, setSelected] = useState([]);
  useEffect(() => setSelected([]), [query, reload]);
  const toggle = id => setSelected(sel => sel.includes(id) ? sel.filter(x => x !== id) : [...sel, id]);
  const bulk = async (path, body, said) => {
    setError(null);
    setNotice('');
    try {
      const res = await call('POST', path, body);
      if (path.endsWith('delete') && editing && selected.includes(editing.id)) setEditing(null);
      const failed = res.meta.failed ? ' ' + count(res.meta.failed, 'link was', 'links were') + ' not: ' +
        res.data.filter(d => d.error).map(d => d.error.detail).slice(0, 3).join('; ') : '';
      setNotice(said(res.meta) + failed);
      setReload(n => n + 1);
    } catch (e) {
      setError(e);
    }
  };
  const bulkArchive = archived => bulk('/v1/links/bulk-update', { ids: selected, data: { archived } },
    m => count(m.updated, 'link', 'links') + (archived ? ' archived.' : ' unarchived.'));
  const bulkDelete = () => bulk('/v1/links/bulk-delete', { ids: selected }, m => count(m.deleted, 'link', 'links') + ' deleted.');

  const campaignName = id => {
    const c = campaigns.list && campaigns.list.data.find(c => c.id === id);
    return c ? c.name : id;
  };
  const verified = domains.list ? domains.list.data.filter(d => d.verified) : [];
  const loading = !answer || answer.query !== query;
  // A refused view shows no list (the one before belongs to another view).
  const list = loading && error ? null : answer;
  const pages = list ? Math.max(1, Math.ceil(list.meta.total / list.meta.limit)) : 1;
  return html`<h1>Links</h1>
    <${CreateLink} campaigns=${campaigns.list} domains=${verified} templates=${templates.list}
      onCreated=${l => { go({ ...view, page: 1 }); setNotice('Created ' + l.short_url + '.'); }} />
    <details id="create-many" class="create-many">
      <summary>Create many links at once</summary>
      <${BulkCreate} onCreated=${created => { go({ ...view, page: 1 }); setNotice(count(created.length, 'link', 'links') + ' created.'); }} />
    </details>
    ${editing ? html`<${EditLink} key=${editing.id + editing.updated_at} link=${editing.link} answer=${editing.answer} campaigns=${campaigns.list}
      onCancel=${() => { const id = editing.id; setEditing(null); focusLater('#links tr[data-id="' + id + '"] button.edit'); }}
      onSaved=${l => { setEditing({ id: l.id, updated_at: l.updated_at, link: l, answer: l }); setReload(n => n + 1); }} />` : null}
    <section aria-labelledby="links-list">
      <h2 id="links-list">Your links</h2>
      <${Filters} key=${query} view=${view} campaigns=${campaigns.list} domains=${domains.list} onApply=${v => go({ ...v, page: 1 })} />
      ${campaigns.error || domains.error ? html`<p class="msg error" role="alert">The ${campaigns.error ? 'campaigns' : 'domains'} could not be read: ${(campaigns.error || domains.error).message}</p>` : null}
      <${Message} error=${error} notice=${notice} />
      ${loading && !error ? html`<p role="status">Loading links…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">${filtered(view) ? 'No link matches these filters.' : 'No links yet. Create the first one above.'}</p>` : null}
      ${selected.length > 0 ? html`<div class="bulk-bar" id="bulk-bar" role="region" aria-label="Actions on the selected links">
        <span>${count(selected.length, 'link', 'links')} selected</span>
        <button type="button" class="secondary" onClick=${() => bulkArchive(true)}>Archive</button>
        <button type="button" class="secondary" onClick=${() => bulkArchive(false)}>Unarchive</button>
        <${Confirm} label="Delete" question=${'Delete ' + count(selected.length, 'link', 'links') + '? Their short URLs stop working.'} onConfirm=${bulkDelete} />
        <button type="button" class="secondary" onClick=${() => setSelected([])}>Clear</button>
        <${CopyAsCurl} method="POST" path="/v1/links/bulk-delete" body=${{ ids: selected }} />
      </div>` : null}
      ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="links" data-query=${list.query} aria-busy=${loading ? 'true' : undefined}>
        <thead><tr><th scope="col" class="pick"><input type="checkbox" aria-label="Select every link of this page"
          checked=${list.data.every(l => selected.includes(l.id))}
          onChange=${e => setSelected(e.target.checked ? list.data.map(l => l.id) : [])} /></th><th scope="col">Short URL</th><th scope="col">Destination</th><th scope="col">Tags</th><th scope="col">Campaign</th><th scope="col" class="num">Redirect</th>
          <th scope="col" class="num" aria-sort=${view.sort === 'clicks' ? 'descending' : undefined}>Clicks${view.sort === 'clicks' ? html`<span aria-hidden="true"> ↓</span>` : ''}</th>
          <th scope="col" aria-sort=${view.sort === 'created' ? 'descending' : undefined}>Created${view.sort === 'created' ? html`<span aria-hidden="true"> ↓</span>` : ''}</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${list.data.map(l => html`<tr key=${l.id} data-alias=${l.alias} data-id=${l.id}>
          <td class="pick"><input type="checkbox" aria-label=${'Select ' + l.alias} checked=${selected.includes(l.id)} onChange=${() => toggle(l.id)} /></td>
          <td class="short" data-label="Short URL"><a href=${l.short_url} target="_blank" rel="noopener noreferrer">${l.short_url.replace(/^https?:\/\//, '')}</a> <${CopyButton} text=${l.short_url} label="Copy" describe=${'Copy short URL ' + l.short_url} /><${LinkMeta} link=${l} /></td>
          <td class="dest" data-label="Destination" title=${l.destination_url}>${l.destination_url}</td>
          <td class="tags" data-label="Tags">${(l.tags || []).map(t => html`<button type="button" ...${chipProps(t, tagInfo)} aria-label=${'Show the links tagged ' + t} onClick=${() => go({ ...view, tag: t, page: 1 })}>${t}</button>`)}</td>
          <td class="campaign" data-label="Campaign">${l.campaign_id ? campaignName(l.campaign_id) : '—'}</td>
          <td class="num code" data-label="Redirect">${l.redirect_code}</td>
          <td class="num clicks" data-label="Clicks">${fmtNumber(l.clicks)}</td>
          <td class="when" data-label="Created">${fmtDate(l.created_at)}</td>
          <td class="actions">
            <a href=${'/app/analytics?link=' + l.id} aria-label=${'Analytics of ' + l.alias}>Analytics</a>
            <button type="button" class="secondary edit" aria-label=${'Edit ' + l.alias} onClick=${() => { setNotice(''); setEditing({ id: l.id, updated_at: l.updated_at, link: l }); }}>Edit</button>
            <${QRButton} link=${l} />
            <${Confirm} label="Delete" question=${'Delete ' + l.alias + '? Its short URL stops working.'} onConfirm=${() => remove(l)} />
          </td>
        </tr>`)}</tbody>
      </table></div>` : null}
      ${list && (list.data.length > 0 || view.page > 1) ? html`<nav class="pager" aria-label="Pages of links">
        <button type="button" class="secondary" disabled=${view.page <= 1} onClick=${() => go({ ...view, page: view.page - 1 })}>Previous</button>
        <span>Page ${view.page} of ${pages} · ${count(list.meta.total, 'link', 'links')}${list.meta.search_truncated ? ' (only the newest links were ' + (filtered(view) ? 'searched' : 'ranked') + ')' : ''}</span>
        <button type="button" class="secondary" disabled=${view.page >= pages} onClick=${() => go({ ...view, page: view.page + 1 })}>Next</button>
      </nav>` : null}
    </section>`;
}

// SOON is how close an expiry is shown as a warning.
const SOON = 7 * 24 * 3600 * 1000;

// linkBadges lists what a person should know of a link at a glance, from
// its controls: [class, text, description], the ones that stop the
// link first.
export function linkBadges(l, now = Date.now()) {
  const out = [];
  const exp = l.expires_at ? Date.parse(l.expires_at) : NaN;
  if (exp <= now) out.push(['bad expired', 'Expired', 'Expired on ' + fmtDate(l.expires_at)]);
  if (l.max_clicks && l.clicks >= l.max_clicks) out.push(['bad used-up', 'Used up', 'All ' + fmtNumber(l.max_clicks) + ' clicks used']);
  if (exp > now) {
    const day = new Date(exp).toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: exp - now > 300 * 24 * 3600 * 1000 ? 'numeric' : undefined });
    out.push([exp - now <= SOON ? 'warn expires' : 'expires', 'Expires ' + day, 'Expires on ' + fmtDate(l.expires_at)]);
  }
  if (l.max_clicks && l.clicks < l.max_clicks) out.push(['clicks-left', fmtNumber(l.max_clicks - l.clicks) + ' of ' + fmtNumber(l.max_clicks) + ' clicks left', 'Click limit ' + fmtNumber(l.max_clicks)]);
  const dc = l.destination_check;
  if (dc && dc.status === 'broken') out.push(['bad broken', 'Broken' + (dc.http_status ? ' · ' + dc.http_status : ''), checkText(dc)]);
  if (l.archived) out.push(['archived', 'Archived', 'Hidden from the default list; still redirects']);
  if (l.has_password) out.push(['password', 'Password', 'Visitors need the password']);
  if (l.rules && l.rules.length) out.push(['rules', count(l.rules.length, 'rule', 'rules'), 'Targeting rules']);
  if (l.variants && l.variants.length) out.push(['ab', 'A/B ' + l.variants.map(v => v.weight).join('/'), 'A/B split of ' + count(l.variants.length, 'variant', 'variants')]);
  return out;
}

// checkText says what the last check of a destination found.
export function checkText(dc) {
  const what = dc.error || (dc.http_status ? 'answered ' + dc.http_status : 'answered');
  return 'Destination check: ' + what + (dc.checked_at ? ' (' + fmtDate(dc.checked_at) + ')' : '');
}

// LinkMeta is a link's title (a second line under its short URL), its
// note and its badges.
function LinkMeta({ link }) {
  const badges = linkBadges(link);
  if (!link.title && !link.note && badges.length === 0) return null;
  return html`<div class="link-meta">
    ${link.title ? html`<span class="link-title">${link.title}</span>` : null}
    ${link.note ? html`<${LinkNote} note=${link.note} />` : null}
    ${badges.length ? html`<span class="badges">${badges.map(([cls, text, desc]) => html`<span class=${'badge ' + cls} title=${desc}>${text}</span>`)}</span>` : null}
  </div>`;
}

// focusLater moves the focus to sel once the page has drawn it (after a
// panel closes, back to the button that opened it).
function focusLater(sel) {
  requestAnimationFrame(() => { const e = document.querySelector(sel); if (e) e.focus(); });
}

// Filters is the form of the list's view; it applies on submit, so that
// choosing in a select with the keyboard does not load a list per option.
function Filters({ view, campaigns, domains, onApply }) {
  const submit = e => {
    e.preventDefault();
    const d = Object.fromEntries(new FormData(e.target));
    onApply({ search: d.search.trim(), tag: d.tag.split(',').map(t => t.trim()).filter(Boolean).join(','), campaign: d.campaign, domain: d.domain, sort: d.sort, archived: d.archived || 'false', broken: d.broken === 'true' });
  };
  const known = domains ? domains.data.map(d => d.hostname) : [];
  return html`<form class="filters" role="search" aria-label="Filter and sort links" onSubmit=${submit}>
    <div class="field"><label for="search">Search</label>
      <input id="search" name="search" type="search" placeholder="alias, URL, tag, note" value=${view.search} /></div>
    <div class="field"><label for="filter-tag">Tag</label>
      <input id="filter-tag" name="tag" placeholder="promo" value=${view.tag} /></div>
    <div class="field"><label for="filter-campaign">Campaign</label>
      <select id="filter-campaign" name="campaign" value=${view.campaign}>
        <option value="">Any campaign</option>
        ${(campaigns ? campaigns.data : []).map(c => html`<option value=${c.id}>${c.name}</option>`)}
        ${view.campaign && campaigns && !campaigns.data.some(c => c.id === view.campaign) ? html`<option value=${view.campaign}>${view.campaign}</option>` : null}
      </select></div>
    <div class="field"><label for="filter-domain">Domain</label>
      <select id="filter-domain" name="domain" value=${view.domain}>
        <option value=${ANY}>Any domain</option>
        <option value="">Primary host</option>
        ${known.map(h => html`<option value=${h}>${h}</option>`)}
        ${view.domain !== ANY && view.domain !== '' && domains && !known.includes(view.domain) ? html`<option value=${view.domain}>${view.domain}</option>` : null}
      </select></div>
    <div class="field"><label for="sort">Sort by</label>
      <select id="sort" name="sort" value=${view.sort}>
        <option value="created">Newest first</option>
        <option value="clicks">Most clicks first</option>
      </select></div>
    <${ArchivedFilter} value=${view.archived} />
    <div class="field"><label for="filter-broken">Destination</label>
      <select id="filter-broken" name="broken" value=${view.broken ? 'true' : 'false'}>
        <option value="false">Any destination</option>
        <option value="true">Broken only</option>
      </select></div>
    <div class="actions">
      <button type="submit" class="secondary">Apply</button>
      ${filtered(view) || view.sort !== 'created' ? html`<button type="button" class="secondary" id="clear-filters" onClick=${() => onApply({ search: '', tag: '', campaign: '', domain: ANY, sort: 'created', archived: 'false', broken: false })}>Clear</button>` : null}
    </div>
  </form>`;
}

// Select is a labelled select with the API's message for it underneath.
function Select({ id, label, error, hint, value, onChange, children }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <select id=${id} name=${id} value=${value} onChange=${onChange} aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? id + '-error' : hint ? id + '-hint' : undefined}>${children}</select>
    ${hint && !error ? html`<small id=${id + '-hint'} class="hint">${hint}</small>` : null}
    ${error ? html`<small id=${id + '-error'} class="field-error">${error}</small>` : null}
  </div>`;
}

const splitTags = s => s.split(',').map(t => t.trim()).filter(Boolean);

// fieldError is the API's message for a field: "tags" also collects the
// messages of single tags.
function fieldError(f, name) {
  const all = Object.keys(f).filter(k => k === name || k === '/' + name || k.startsWith(name + '[') || k.startsWith('/' + name + '/')).map(k => f[k]);
  return all.length ? all.join(' ') : undefined;
}

// formOf is a link as the form's fields.
function formOf(l) {
  return {
    destination_url: l.destination_url, alias: l.alias, domain: l.domain, tags: (l.tags || []).join(', '),
    utm_source: l.utm_source || '', utm_medium: l.utm_medium || '', utm_campaign: l.utm_campaign || '',
    campaign_id: l.campaign_id || '', redirect_code: String(l.redirect_code || 302),
    forward_path: !!l.forward_path, forward_query: !!l.forward_query, external_id: l.external_id || '', crawlable: !!l.crawlable, public_stats: !!l.public_stats,
    escape_in_app_browser: !!l.escape_in_app_browser, retargeting: !!l.retargeting,
    ...targetingFormOf(l),
    ...limitsForm(l),
  };
}

const EMPTY = { destination_url: '', alias: '', domain: '', tags: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_template_id: '', campaign_id: '', redirect_code: '302', forward_path: false, forward_query: false, external_id: '', crawlable: false, public_stats: false, escape_in_app_browser: false, retargeting: false, ...TARGETING_EMPTY, ...LIMITS_EMPTY };

// createBody is what the create form sends: the destination and the fields
// given (302 is the API's default and is left out).
function createBody(form) {
  const body = { destination_url: form.destination_url.trim() };
  if (form.alias.trim()) body.alias = form.alias.trim();
  if (form.domain) body.domain = form.domain;
  const tags = splitTags(form.tags);
  if (tags.length) body.tags = tags;
  for (const [k] of UTM) if (form[k].trim()) body[k] = form[k].trim();
  if (form.utm_template_id) body.utm_template_id = form.utm_template_id;
  if (form.campaign_id) body.campaign_id = form.campaign_id;
  if (form.redirect_code !== '302') body.redirect_code = Number(form.redirect_code);
  // Unchecked: left out, for the workspace's default.
  if (form.forward_path) body.forward_path = true;
  if (form.forward_query) body.forward_query = true;
  if (form.external_id.trim()) body.external_id = form.external_id.trim();
  if (form.crawlable) body.crawlable = true;
  if (form.public_stats) body.public_stats = true;
  if (form.escape_in_app_browser) body.escape_in_app_browser = true;
  if (form.retargeting) body.retargeting = true;
  Object.assign(body, targetingBody(form, null));
  return Object.assign(body, limitsBody(form));
}

// editBody is what the edit form sends: only the fields changed from the
// link as the server last answered it; an emptied UTM field or campaign
// is "" (the API clears it), emptied tags are [].
function editBody(form, l) {
  const was = formOf(l);
  const body = {};
  for (const k of ['destination_url', 'alias', 'utm_source', 'utm_medium', 'utm_campaign', 'external_id']) {
    if (form[k].trim() !== was[k]) body[k] = form[k].trim();
  }
  const tags = splitTags(form.tags);
  if (tags.join(',') !== splitTags(was.tags).join(',')) body.tags = tags;
  if (form.campaign_id !== was.campaign_id) body.campaign_id = form.campaign_id;
  if (form.redirect_code !== was.redirect_code) body.redirect_code = Number(form.redirect_code);
  for (const k of ['forward_path', 'forward_query', 'crawlable', 'public_stats', ...INTERSTITIALS.map(([k]) => k)]) if (form[k] !== was[k]) body[k] = form[k];
  Object.assign(body, targetingBody(form, was));
  return Object.assign(body, limitsBody(form, was));
}

// INTERSTITIALS are the pages a link may serve before its redirect, off
// unless checked.
const INTERSTITIALS = [
  ['escape_in_app_browser', 'Leave in-app browsers', "visitors in Instagram, Facebook, TikTok or LinkedIn are sent on to their own browser"],
  ['retargeting', 'Fire retargeting pixels', "a short page fires the workspace's pixels (Workspace page) before the redirect: one more page for visitors, and their consent is yours to ask"],
];

// LinkFields are the fields of a link, for create (no prefix) and edit
// ("edit_" before each id, so that both forms can be on the page at once).
function LinkFields({ form, setField, f, p, campaigns, domains, templates, editing, shortURL }) {
  const more = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_template_id', 'campaign_id', 'redirect_code', 'forward_path', 'forward_query', 'external_id', 'crawlable', 'public_stats', 'escape_in_app_browser', 'retargeting'];
  const templateList = templates ? templates.data : [];
  const template = form.utm_template_id && templateList.find(t => t.id === form.utm_template_id);
  const moreSet = editing || more.some(k => f[k]) || (!editing && more.some(k => form[k] !== EMPTY[k]));
  const campaignList = campaigns ? campaigns.data : [];
  return html`
    <${Field} id=${p + 'destination_url'} label="Destination URL" type="url" required placeholder="https://example.com/page" value=${form.destination_url} onInput=${setField} error=${fieldError(f, 'destination_url')} />
    <div class="row">
      <${Field} id=${p + 'alias'} label=${editing ? 'Alias' : 'Alias (optional)'} placeholder=${editing ? '' : 'made up when empty'} maxlength="64" value=${form.alias} onInput=${setField} error=${fieldError(f, 'alias')}
        hint=${editing ? 'Changing it changes the short URL; the old one stops working.' : undefined} />
      ${editing
        ? html`<div class="field"><span class="label">Domain</span><p class="fixed">${form.domain}</p></div>`
        : html`<${Select} id="domain" label="Domain" value=${form.domain} onChange=${setField} error=${fieldError(f, 'domain')}
            hint=${domains.length ? undefined : 'Verified custom domains appear here.'}>
            <option value="">Primary host</option>
            ${domains.map(d => html`<option value=${d.hostname}>${d.hostname}</option>`)}
          </${Select}>`}
      <${Field} id=${p + 'tags'} label=${editing ? 'Tags (comma separated)' : 'Tags (comma separated, optional)'} value=${form.tags} onInput=${setField} error=${fieldError(f, 'tags')} />
    </div>
    <${NoteField} id=${p + 'note'} value=${form.note} onInput=${setField} error=${fieldError(f, 'note')} />
    <details class="more" open=${moreSet || undefined}>
      <summary>More options: UTM, campaign, redirect code, forwarding, external ID, search engines, public statistics, in-app browsers, pixels</summary>
      ${editing || templateList.length === 0 ? null : html`<div class="row">
        <${Select} id="utm_template_id" label="UTM template" value=${form.utm_template_id} onChange=${setField} error=${fieldError(f, 'utm_template_id')}
          hint=${template ? 'Gives ' + UTM.filter(([k]) => template[k]).map(([k]) => k + '=' + template[k]).join(', ') + ' where the fields below are empty.' : 'Saved sets of UTM values, kept on the Workspace page.'}>
          <option value="">None</option>
          ${templateList.map(t => html`<option value=${t.id}>${t.name}</option>`)}
        </${Select}>
      </div>`}
      <div class="row">
        ${UTM.map(([k, label, ph]) => html`<${Field} id=${p + k} label=${label} maxlength="200" placeholder=${template && template[k] ? template[k] + ' (template)' : ph} value=${form[k]} onInput=${setField} error=${fieldError(f, k)}
          hint=${editing ? 'Empty clears it' : undefined} />`)}
      </div>
      <div class="row">
        <${Select} id=${p + 'campaign_id'} label="Campaign" value=${form.campaign_id} onChange=${setField} error=${fieldError(f, 'campaign_id')}
          hint="Its UTM values apply where the link sets none.">
          <option value="">None</option>
          ${campaignList.map(c => html`<option value=${c.id}>${c.name}</option>`)}
          ${form.campaign_id && campaigns && !campaignList.some(c => c.id === form.campaign_id) ? html`<option value=${form.campaign_id}>${form.campaign_id}</option>` : null}
        </${Select}>
        <${Select} id=${p + 'redirect_code'} label="Redirect code" value=${form.redirect_code} onChange=${setField} error=${fieldError(f, 'redirect_code')}
          hint="Permanent ones (301, 308) may be cached by browsers for 5 minutes.">
          ${CODES.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
        </${Select}>
        <${Field} id=${p + 'external_id'} label="External ID" maxlength="128" placeholder="order-1234" value=${form.external_id} onInput=${setField} error=${fieldError(f, 'external_id')}
          hint=${'Another system\u2019s ID of the link, unique in the workspace: the API finds the link at /v1/links/ext_{id}.' + (editing ? ' Empty removes it.' : '')} />
      </div>
      <div class="row forwarding">
        ${[['forward_path', 'Forward the path', 'short/rest/of/path goes to the destination + /rest/of/path'],
           ['forward_query', 'Forward the query', "the visitor's parameters are added; the link's own win"],
           ['crawlable', 'Let search engines index it', 'robots.txt allows this short URL; every other one is disallowed']].map(([k, label, hint]) => html`
          <div class="field"><label class="check"><input type="checkbox" id=${p + k} checked=${!!form[k]}
            onChange=${e => setField({ target: { name: p + k, value: e.target.checked } })} /> ${label}</label>
            <small class="hint">${hint}${editing || k === 'crawlable' ? '' : ". Unchecked: the workspace's default."}</small>
            ${fieldError(f, k) ? html`<small class="field-error">${fieldError(f, k)}</small>` : null}</div>`)}
      </div>
      <div class="row forwarding">
        <div class="field"><label class="check"><input type="checkbox" id=${p + 'public_stats'} checked=${!!form.public_stats}
          onChange=${e => setField({ target: { name: p + 'public_stats', value: e.target.checked } })} /> Public statistics</label>
          <small class="hint">Anyone with the address sees the link's clicks, referrers, countries, devices and browsers, never its destination.</small>
          ${fieldError(f, 'public_stats') ? html`<small class="field-error">${fieldError(f, 'public_stats')}</small>` : null}
          ${shortURL && form.public_stats ? html`<p class="public-stats-url"><code id=${p + 'public_stats_url'}>${shortURL}/stats</code>
            <${CopyButton} text=${shortURL + '/stats'} id=${p + 'public_stats_copy'} describe="Copy the public statistics address" />
            <a href=${shortURL + '/stats'} target="_blank" rel="noopener">Open</a></p>` : null}</div>
      </div>
      <div class="row interstitials">
        ${INTERSTITIALS.map(([k, label, hint]) => html`
          <div class="field"><label class="check"><input type="checkbox" id=${p + k} checked=${!!form[k]}
            onChange=${e => setField({ target: { name: p + k, value: e.target.checked } })} /> ${label}</label>
            <small class="hint">${hint}</small>
            ${fieldError(f, k) ? html`<small class="field-error">${fieldError(f, k)}</small>` : null}</div>`)}
      </div>
    </details>
    <${TargetingFields} form=${form} setField=${setField} f=${f} p=${p} editing=${editing} />
    <${LimitsFields} form=${form} setField=${setField} f=${f} p=${p} editing=${editing} />`;
}

// NOTE_MAX is the API's bound on a note, in characters.
const NOTE_MAX = 2000;

// NoteField is the link's note: several lines for the workspace's people,
// found by the list's search.
function NoteField({ id, value, onInput, error }) {
  const left = NOTE_MAX - [...value].length;
  return html`<div class="field note-field">
    <label for=${id}>Note (optional)</label>
    <textarea id=${id} name=${id} rows="2" maxlength=${NOTE_MAX} value=${value} onInput=${onInput}
      aria-invalid=${error ? 'true' : undefined} aria-describedby=${id + (error ? '-error' : '-hint')}></textarea>
    ${error ? html`<small id=${id + '-error'} class="field-error">${error}</small>`
      : html`<small id=${id + '-hint'} class="hint">For your team: shown in the list, found by search, never public.${left < 200 ? ' ' + left + ' characters left.' : ''}</small>`}
  </div>`;
}

// NOTE_SHOWN is how many characters of a note the list shows before
// "more".
const NOTE_SHOWN = 80;

// LinkNote is a link's note in the list: a line of it, the whole behind a
// disclosure when it is longer.
function LinkNote({ note }) {
  const first = note.split('\n')[0];
  const chars = [...first];
  if (chars.length <= NOTE_SHOWN && first === note) return html`<span class="link-note" title=${note}>${note}</span>`;
  const preview = chars.length > NOTE_SHOWN ? chars.slice(0, NOTE_SHOWN).join('') + '…' : first + ' …';
  return html`<details class="link-note"><summary title=${note}>${preview}</summary><p class="note-full">${note}</p></details>`;
}

function FormError({ error }) {
  return error ? html`<p class="msg error" role="alert">${error.message}</p>` : null;
}

function CreateLink({ campaigns, domains, templates, onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(EMPTY, form => call('POST', '/v1/links', createBody(form)), onCreated);
  return html`<section aria-labelledby="create-link" class="card">
    <h2 id="create-link">Create a link</h2>
    <form id="create-link-form" onSubmit=${submit} novalidate>
      <${LinkFields} form=${form} setField=${set} f=${f} p="" campaigns=${campaigns} domains=${domains} templates=${templates} />
      <${FormError} error=${error} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create link'}</button>
      <${CopyAsCurl} method="POST" path="/v1/links" body=${createBody(form)} /></div>
    </form>
  </section>`;
}

// EditLink edits link; answer is the link the server answered to the last
// save, shown until the next one.
function EditLink({ link: l, answer, campaigns, onCancel, onSaved }) {
  const path = '/v1/links/' + l.id;
  const { form, set, submit, error, busy, fields: f } = useApiForm(formOf(l), form => call('PATCH', path, editBody(form, l)), onSaved);
  const setField = e => set({ target: { name: e.target.name.slice('edit_'.length), value: e.target.value } });
  const body = editBody(form, l);
  const changed = Object.keys(body).length > 0;
  useEffect(() => {
    if (!answer) document.getElementById('edit_destination_url').focus();
  }, []);
  return html`<section aria-labelledby="edit-link" class="card">
    <h2 id="edit-link">Edit ${l.short_url.replace(/^https?:\/\//, '')}</h2>
    ${answer ? html`<div class="answer" role="status">
      <p class="msg notice">Saved. The server answered:</p>
      <${LinkFacts} l=${answer} campaigns=${campaigns} />
    </div>` : null}
    <form id="edit-link-form" onSubmit=${submit} novalidate>
      <${LinkFields} form=${form} setField=${setField} f=${f} p="edit_" campaigns=${campaigns} domains=${[]} editing shortURL=${l.short_url} />
      <${FormError} error=${error} />
      <div class="actions"><button type="submit" disabled=${busy || !changed}>${busy ? 'Saving…' : 'Save changes'}</button>
      <button type="button" class="secondary" onClick=${onCancel}>${answer ? 'Close' : 'Cancel'}</button>
      <${CopyAsCurl} method="PATCH" path=${path} body=${body} /></div>
      <p class="hint">${changed ? 'Sends only the fields changed: ' + Object.keys(body).join(', ') + '.' : 'Change a field to save it.'}</p>
    </form>
  </section>`;
}

// LinkFacts lists a link as the server answered it.
function LinkFacts({ l, campaigns }) {
  const c = l.campaign_id && campaigns && campaigns.data.find(c => c.id === l.campaign_id);
  return html`<dl class="facts link-answer">
    <dt>Short URL</dt><dd>${l.short_url}</dd>
    <dt>Destination</dt><dd class="answer-destination">${l.destination_url}</dd>
    <dt>Tags</dt><dd>${(l.tags || []).length ? l.tags.join(', ') : '—'}</dd>
    <dt>UTM</dt><dd>${UTM.map(([k]) => l[k] ? k + '=' + l[k] : null).filter(Boolean).join(' · ') || '—'}</dd>
    <dt>Campaign</dt><dd>${l.campaign_id ? (c ? c.name : l.campaign_id) : '—'}</dd>
    <dt>Redirect</dt><dd>${l.redirect_code}</dd>
    <dt>Note</dt><dd class="note-full">${l.note || '—'}</dd>
    <dt>Updated</dt><dd>${fmtDate(l.updated_at)}</dd>
  </dl>`;
}
