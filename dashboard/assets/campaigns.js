// campaigns.js is the Campaigns page: list with each campaign's number of
// links, create, edit (name, status, UTM defaults), delete (taking its
// links out of it first when it still has some).
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, fmtDate, count, useApiForm, useList } from './ui.js';

const STATUSES = ['active', 'paused', 'archived'];
const EMPTY = { name: '', status: 'active', utm_source: '', utm_medium: '', utm_campaign: '' };

export function CampaignsPage() {
  const { list, setList, error, setError, reload } = useList('/v1/campaigns');
  const [notice, setNotice] = useState('');
  const [editing, setEditing] = useState(null); // the campaign being edited

  const remove = async c => {
    setError(null);
    setNotice('');
    try {
      await call('DELETE', deletePath(c));
      if (editing && editing.id === c.id) setEditing(null);
      setNotice('Deleted the campaign ' + c.name + (c.links > 0 ? '; its ' + count(c.links, 'link keeps', 'links keep') + ' working without its UTM values.' : '.'));
      reload();
    } catch (e) {
      setError(e);
    }
  };

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
          <td>${c.name}</td>
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
