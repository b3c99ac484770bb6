// campaigns.js is the Campaigns page: list with each campaign's number of
// links, create, edit (name, status, UTM defaults), delete (taking its
// links out of it first when it still has some); and one campaign's page
// (/app/campaigns?campaign=<id>): its fields and edit, its links and its
// analytics.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, fmtDate, fmtNumber, count, useAction, useApiForm, useList } from './ui.js';
import { Picker, Report, Export, rangeQuery, browserZone } from './analytics.js';

const STATUSES = ['active', 'paused', 'archived'];
const EMPTY = { name: '', status: 'active', utm_source: '', utm_medium: '', utm_campaign: '' };

const LINKS_LIMIT = 20;

function campaignParam() {
  return new URLSearchParams(location.search).get('campaign') || '';
}

// show shows a campaign's page (or the list, for ''), in the history like
// the navigation's own links.
function show(e, id) {
  if (e) e.preventDefault();
  history.pushState(null, '', '/app/campaigns' + (id ? '?campaign=' + encodeURIComponent(id) : ''));
  dispatchEvent(new PopStateEvent('popstate'));
}

export function CampaignsPage() {
  const [campaign, setCampaign] = useState(campaignParam());
  useEffect(() => {
    const onPop = () => setCampaign(campaignParam());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);
  return campaign ? html`<${CampaignPage} key=${campaign} id=${campaign} />` : html`<${CampaignList} />`;
}

function CampaignList() {
  const { list, error, setError, reload } = useList('/v1/campaigns');
  const { act, notice, setNotice } = useAction({ reload, setError });
  const [editing, setEditing] = useState(null); // the campaign being edited

  const remove = c => act(async () => {
    await call('DELETE', deletePath(c));
    if (editing && editing.id === c.id) setEditing(null);
    return 'Deleted the campaign ' + c.name + (c.links > 0 ? '; its ' + count(c.links, 'link keeps', 'links keep') + ' working without its UTM values.' : '.');
  });

  return html`<h1>Campaigns</h1>
    <p class="hint">A campaign groups links and gives them UTM values on redirect where a link sets none of its own. Its status is for people and filters: links of a paused or archived campaign keep redirecting.</p>
    <${CampaignForm} key="create" onDone=${c => { setNotice('Created the campaign ' + c.name + '.'); reload(); }} />
    ${editing ? html`<${CampaignForm} key=${'edit-' + editing.id} campaign=${editing}
      onCancel=${() => setEditing(null)}
      onDone=${c => { setEditing(null); setNotice('Saved the campaign ' + c.name + '.'); reload(); }} />` : null}
    <section aria-labelledby="campaigns-list">
      <h2 id="campaigns-list">Campaigns of this workspace</h2>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading campaigns…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">No campaigns yet. Create one above, then add links to it from the API with <code>campaign_id</code>.</p>` : null}
      ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="campaigns">
        <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">UTM source</th><th scope="col">UTM medium</th><th scope="col">UTM campaign</th><th scope="col" class="num">Links</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${list.data.map(c => html`<tr key=${c.id} data-campaign=${c.id}>
          <td><a href=${'/app/campaigns?campaign=' + encodeURIComponent(c.id)} class="open" onClick=${e => show(e, c.id)}>${c.name}</a></td>
          <td><span class=${'state ' + c.status}>${c.status}</span></td>
          <td>${c.utm_source || '—'}</td>
          <td>${c.utm_medium || '—'}</td>
          <td>${c.utm_campaign || '—'}</td>
          <td class="num links">${count(c.links, 'link', 'links')}</td>
          <td class="when">${fmtDate(c.created_at)}</td>
          <td class="actions">
            <button type="button" class="secondary edit" aria-label=${'Edit ' + c.name} onClick=${() => { setNotice(''); setEditing(c); }}>Edit</button>
            <${Confirm} label="Delete" question=${deleteQuestion(c)} onConfirm=${() => remove(c)} />
            <${CopyAsCurl} method="DELETE" path=${deletePath(c)} />
          </td>
        </tr>`)}</tbody>
      </table></div>` : null}
    </section>`;
}

// deletePath takes a campaign's links out of it first when it has some
// (the API refuses to delete it otherwise).
function deletePath(c) {
  return '/v1/campaigns/' + c.id + (c.links > 0 ? '?detach=true' : '');
}

function deleteQuestion(c) {
  if (c.links === 0) return 'Delete the campaign ' + c.name + '? Its analytics go with it.';
  return 'Delete the campaign ' + c.name + '? Its ' + count(c.links, 'link is', 'links are') +
    ' taken out of it first: they keep working, without the campaign\'s UTM values, and keep their own analytics. The campaign\'s analytics go with it.';
}

// campaignBody is what the form sends: every field, so that an emptied
// UTM value is cleared on an edit; on a create empty UTM values are left out.
function campaignBody(form, editing) {
  const body = { name: form.name.trim(), status: form.status };
  for (const k of ['utm_source', 'utm_medium', 'utm_campaign']) {
    const v = form[k].trim();
    if (v || editing) body[k] = v;
  }
  return body;
}

function CampaignForm({ campaign, onDone, onCancel }) {
  const editing = !!campaign;
  const initial = editing
    ? { name: campaign.name, status: campaign.status, utm_source: campaign.utm_source || '', utm_medium: campaign.utm_medium || '', utm_campaign: campaign.utm_campaign || '' }
    : EMPTY;
  const method = editing ? 'PATCH' : 'POST';
  const path = editing ? '/v1/campaigns/' + campaign.id : '/v1/campaigns';
  const id = editing ? 'edit-campaign' : 'create-campaign';
  const p = editing ? 'edit_' : '';
  const { form, set, submit, error, busy, fields: f } = useApiForm(initial, form => call(method, path, campaignBody(form, editing)), onDone);
  // The fields are named as the API's, with a prefix for the edit form so
  // that both forms can be on the page at once.
  const setField = e => set({ target: { name: e.target.name.slice(p.length), value: e.target.value } });
  return html`<section class="card" aria-labelledby=${id}>
    <h2 id=${id}>${editing ? 'Edit the campaign ' + campaign.name : 'Create a campaign'}</h2>
    <form id=${id + '-form'} onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id=${p + 'name'} label="Name" required maxlength="100" placeholder="Spring sale" value=${form.name} onInput=${setField} error=${f.name} />
        <div class="field"><label for=${p + 'status'}>Status</label>
          <select id=${p + 'status'} name=${p + 'status'} value=${form.status} onChange=${setField}>
            ${STATUSES.map(s => html`<option value=${s}>${s}</option>`)}
          </select>${f.status ? html`<small class="field-error">${f.status}</small>` : null}</div>
      </div>
      <div class="row">
        <${Field} id=${p + 'utm_source'} label="UTM source" maxlength="200" placeholder="newsletter" value=${form.utm_source} onInput=${setField} error=${f.utm_source} hint=${editing ? 'Empty clears it' : 'Optional'} />
        <${Field} id=${p + 'utm_medium'} label="UTM medium" maxlength="200" placeholder="email" value=${form.utm_medium} onInput=${setField} error=${f.utm_medium} hint=${editing ? 'Empty clears it' : 'Optional'} />
        <${Field} id=${p + 'utm_campaign'} label="UTM campaign" maxlength="200" placeholder="spring-sale" value=${form.utm_campaign} onInput=${setField} error=${f.utm_campaign} hint=${editing ? 'Empty clears it' : 'Optional'} />
      </div>
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : editing ? 'Save campaign' : 'Create campaign'}</button>
      ${editing ? html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>` : null}
      <${CopyAsCurl} method=${method} path=${path} body=${campaignBody(form, editing)} /></div>
    </form>
  </section>`;
}

// CampaignPage is one campaign: its fields with the edit form, its links
// (paged) and its analytics in a range.
function CampaignPage({ id }) {
  const path = '/v1/campaigns/' + encodeURIComponent(id);
  const [campaign, setCampaign] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [editing, setEditing] = useState(false);
  const [changed, setChanged] = useState(0); // a save makes the links and analytics read again
  const [deleted, setDeleted] = useState('');

  useEffect(() => {
    let live = true;
    call('GET', path).then(c => live && setCampaign(c), e => live && setError(e));
    return () => { live = false; };
  }, [id]);

  // The tab names the campaign while its page is open.
  const name = campaign ? campaign.name : '';
  useEffect(() => {
    if (!name) return undefined;
    const before = document.title;
    document.title = name + ' · Campaigns · linkbolt';
    return () => { document.title = before; };
  }, [name]);

  const back = html`<p><a href="/app/campaigns" id="all-campaigns" onClick=${e => show(e, '')}>← All campaigns</a></p>`;
  const remove = async () => {
    setError(null);
    setNotice('');
    try {
      await call('DELETE', deletePath(campaign));
      setDeleted('Deleted the campaign ' + campaign.name + (campaign.links > 0 ? '; its ' + count(campaign.links, 'link keeps', 'links keep') + ' working without its UTM values.' : '.'));
    } catch (e) {
      setError(e);
    }
  };

  if (deleted) return html`<h1>Campaign</h1>${back}<${Message} notice=${deleted} />`;
  if (error && !campaign) {
    return html`<h1>Campaign</h1>${back}<${Message} error=${error} />`;
  }
  if (!campaign) return html`<h1>Campaign</h1>${back}<p role="status">Loading the campaign…</p>`;
  const c = campaign;
  return html`<h1>Campaign · <span class="an-subject">${c.name}</span></h1>
    ${back}
    <section class="card" aria-labelledby="campaign-facts-h" id="campaign-facts">
      <h2 id="campaign-facts-h">The campaign</h2>
      <${Message} notice=${notice} error=${error} />
      <dl class="facts">
        <dt>Status</dt><dd><span id="campaign-status" class=${'state ' + c.status}>${c.status}</span></dd>
        <dt>UTM source</dt><dd>${c.utm_source || '—'}</dd>
        <dt>UTM medium</dt><dd>${c.utm_medium || '—'}</dd>
        <dt>UTM campaign</dt><dd>${c.utm_campaign || '—'}</dd>
        <dt>Links</dt><dd>${count(c.links, 'link', 'links')}</dd>
        <dt>Created</dt><dd>${fmtDate(c.created_at)}</dd>
        <dt>Changed</dt><dd>${fmtDate(c.updated_at)}</dd>
      </dl>
      ${editing ? null : html`<div class="actions"><button type="button" class="secondary edit" onClick=${() => { setNotice(''); setEditing(true); }}>Edit</button>
        <${Confirm} label="Delete" question=${deleteQuestion(c)} onConfirm=${remove} />
        <${CopyAsCurl} method="DELETE" path=${deletePath(c)} /></div>`}
    </section>
    ${editing ? html`<${CampaignForm} key=${'edit-' + c.id + '-' + c.updated_at} campaign=${c}
      onCancel=${() => setEditing(false)}
      onDone=${n => { setCampaign(n); setEditing(false); setChanged(x => x + 1); setNotice('Saved. The server answers: ' + savedSummary(n) + '.'); }} />` : null}
    <${CampaignLinks} id=${c.id} changed=${changed} />
    <${CampaignAnalytics} id=${c.id} changed=${changed} />`;
}

function savedSummary(c) {
  const utm = ['utm_source', 'utm_medium', 'utm_campaign'].map(k => k.replace('utm_', '') + ' ' + (c[k] || 'none'));
  return c.name + ', ' + c.status + ', UTM ' + utm.join(', ');
}

// CampaignLinks is a page of the campaign's links, newest first, each with
// a way to its analytics.
function CampaignLinks({ id, changed }) {
  const [page, setPage] = useState(1);
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);

  useEffect(() => {
    let live = true;
    setError(null);
    const q = new URLSearchParams({ campaign_id: id, limit: LINKS_LIMIT, page });
    call('GET', '/v1/links?' + q).then(l => live && setList(l), e => live && setError(e));
    return () => { live = false; };
  }, [id, page, changed]);

  const pages = list ? Math.max(1, Math.ceil(list.meta.total / list.meta.limit)) : 1;
  return html`<section aria-labelledby="campaign-links-h">
    <h2 id="campaign-links-h">Its links</h2>
    <${Message} error=${error} />
    ${!list && !error ? html`<p role="status">Loading the campaign’s links…</p>` : null}
    ${list && list.data.length === 0 ? html`<p class="empty" id="campaign-links-empty">${page > 1 ? 'No links on this page.' : 'No links in this campaign yet. Create one with its campaign_id from the API.'}</p>` : null}
    ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="campaign-links">
      <thead><tr><th scope="col">Short URL</th><th scope="col">Destination</th><th scope="col" class="num">Clicks</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.data.map(l => html`<tr key=${l.id} data-link=${l.id} data-alias=${l.alias}>
        <td><a href=${l.short_url} target="_blank" rel="noopener noreferrer">${l.short_url.replace(/^https?:\/\//, '')}</a></td>
        <td class="dest" title=${l.destination_url}>${l.destination_url}</td>
        <td class="num">${fmtNumber(l.clicks)}</td>
        <td class="when">${fmtDate(l.created_at)}</td>
        <td><a href=${'/app/analytics?link=' + encodeURIComponent(l.id)} aria-label=${'Analytics of ' + l.alias}>Analytics</a></td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${list && (list.meta.total > 0 || page > 1) ? html`<nav class="pager" aria-label="Pages of the campaign’s links">
      <button type="button" class="secondary" disabled=${page <= 1} onClick=${() => setPage(page - 1)}>Previous</button>
      <span>Page ${page} of ${pages} · ${count(list.meta.total, 'link', 'links')}${list.meta.search_truncated ? ' (only the newest links were read)' : ''}</span>
      <button type="button" class="secondary" disabled=${page >= pages} onClick=${() => setPage(page + 1)}>Next</button>
    </nav>` : null}
  </section>`;
}

// CampaignAnalytics is the Analytics page's picker, report and export for
// the clicks of the campaign's links made while they were in it.
function CampaignAnalytics({ id, changed }) {
  const [query, setQuery] = useState({ range: '30d', start: '', end: '', tz: browserZone(), interval: '', exclude_bots: false });
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const ready = query.range !== 'custom' || (query.start && query.end);

  useEffect(() => {
    if (!ready) return undefined;
    let live = true;
    setError(null);
    setData(null);
    call('GET', '/v1/analytics/campaigns/' + encodeURIComponent(id) + '?' + rangeQuery(query)).then(d => live && setData(d), e => live && setError(e));
    return () => { live = false; };
  }, [query, id, changed]);

  const fields = (error && error.fields) || {};
  return html`<section aria-labelledby="campaign-analytics-h">
    <h2 id="campaign-analytics-h">Its analytics</h2>
    <p class="hint">The clicks of the campaign’s links made while they were in it.</p>
    <${Picker} query=${query} setQuery=${setQuery} fields=${fields} />
    <${Message} error=${error} />
    ${!data && !error && ready ? html`<p role="status">Loading analytics…</p>` : null}
    ${!ready ? html`<p class="empty">Choose the start and end of the range.</p>` : null}
    ${data ? html`<${Report} data=${data} />` : null}
    <${Export} query=${query} ready=${ready} campaign=${id} />
  </section>`;
}
