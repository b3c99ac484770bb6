// webhooks.js is the webhooks page: subscribe a URL to events, the signing
// secret shown once, edit (URL, events, description, enabled), roll the
// secret, enable and disable, send a ping, the delivery log of each webhook
// with retry, delete.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, count, useAction, useApiForm, useList } from './ui.js';

// EVENTS are the event types the API documents for webhooks.
const EVENTS = [
  ['link.created', 'a link is created'],
  ['link.updated', 'a link is changed'],
  ['link.deleted', 'a link is deleted'],
  ['link.clicked', 'a link is followed'],
  ['campaign.updated', 'a campaign is changed'],
];

export function WebhooksPage() {
  const { list, error, setError, reload } = useList('/v1/webhooks');
  const { act, notice, setNotice } = useAction({ reload, setError });
  const [shown, setShown] = useState(null); // a secret just created or rolled
  const [open, setOpen] = useState({}); // webhook id → its log is shown
  const [logTick, setLogTick] = useState(0); // makes the open logs read again
  const [editing, setEditing] = useState(''); // the webhook whose edit form is open

  const path = h => '/v1/webhooks/' + h.id;
  const setEnabled = (h, enabled) => act(async () => {
    await call('PATCH', path(h), { enabled });
    return enabled ? 'Enabled ' + h.url + '. Queued events are sent again, in order.' : 'Disabled ' + h.url + '. It receives nothing until enabled again.';
  });
  const ping = h => act(async () => {
    await call('POST', path(h) + '/test');
    setOpen(o => ({ ...o, [h.id]: true }));
    setLogTick(n => n + 1);
    return 'A ping is on its way to ' + h.url + '. Its delivery is in the log below.';
  });
  const roll = h => act(async () => {
    const n = await call('POST', path(h) + '/secret');
    setShown({ ...n, rolled: true });
  });
  const remove = h => act(async () => {
    await call('DELETE', path(h));
    if (shown && shown.id === h.id) setShown(null);
    if (editing === h.id) setEditing('');
    return 'Deleted the webhook for ' + h.url + ' and its delivery log.';
  });

  return html`<h1>Webhooks</h1>
    <${CreateWebhook} onCreated=${h => { setShown(h); setNotice(''); reload(); }} />
    ${shown ? html`<section class="card once" aria-labelledby="new-secret">
      <h2 id="new-secret">${shown.rolled ? 'New signing secret for ' : 'Signing secret for '}${shown.url}</h2>
      <p class="warning"><strong>Copy this secret now. It is shown only this once and cannot be shown again.</strong></p>
      <p class="secret"><code id="new-secret-value">${shown.secret}</code> <${CopyButton} text=${shown.secret} label="Copy secret" id="copy-secret" /></p>
      <p>Check the <code>Linkbolt-Signature</code> header of every delivery with it.${shown.rolled && shown.previous_secret_expires_at
        ? ' The old secret keeps signing beside it until ' + fmtDate(shown.previous_secret_expires_at) + '.' : ''}</p>
      <button type="button" class="secondary" id="secret-copied" onClick=${() => setShown(null)}>I have copied it</button>
    </section>` : null}
    <section aria-labelledby="webhooks-list">
      <h2 id="webhooks-list">Webhooks of this workspace</h2>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading webhooks…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">No webhooks yet. Create one above to have events sent to your server.</p>` : null}
      ${list && list.data.length > 0 ? html`<ul class="webhooks" id="webhooks">${list.data.map(h => html`<li key=${h.id} class="card webhook" data-webhook=${h.id}>
        <h3 class="hook-url">${h.url}</h3>
        ${h.description ? html`<p>${h.description}</p>` : null}
        <dl class="facts">
          <dt>State</dt><dd><span class=${'state ' + (h.enabled ? 'active' : 'disabled')}>${h.enabled ? 'enabled' : 'disabled'}</span>${h.disabled_reason ? html`<br /><small class="reason">${h.disabled_reason}</small>` : null}</dd>
          <dt>Events</dt><dd>${h.events.map(e => html`<span class="tag">${e}</span>`)}</dd>
          <dt>Secret</dt><dd><code>${h.secret_start}…</code>${h.previous_secret_expires_at ? html`<br /><small>the old one also signs until ${fmtDate(h.previous_secret_expires_at)}</small>` : null}</dd>
          <dt>Created</dt><dd>${fmtDate(h.created_at)}</dd>
          <dt>Created by</dt><dd class="created-by">${creatorText(h.created_by)}</dd>
        </dl>
        <div class="actions">
          <button type="button" class="secondary edit" aria-expanded=${editing === h.id ? 'true' : 'false'} onClick=${() => { setNotice(''); setEditing(editing === h.id ? '' : h.id); }}>${editing === h.id ? 'Close edit' : 'Edit'}</button>
          <button type="button" class="secondary toggle" onClick=${() => setEnabled(h, !h.enabled)}>${h.enabled ? 'Disable' : 'Enable'}</button>
          <${CopyAsCurl} method="PATCH" path=${path(h)} body=${{ enabled: !h.enabled }} />
          <button type="button" class="secondary ping" disabled=${!h.enabled} title=${h.enabled ? undefined : 'Enable the webhook to send a ping'} onClick=${() => ping(h)}>Send test ping</button>
          <${CopyAsCurl} method="POST" path=${path(h) + '/test'} />
          <${Confirm} label="Roll secret" question=${'Roll the secret? The old one keeps signing beside the new one for 24 hours.'} onConfirm=${() => roll(h)} />
          <${CopyAsCurl} method="POST" path=${path(h) + '/secret'} />
          <button type="button" class="secondary log" aria-expanded=${open[h.id] ? 'true' : 'false'} onClick=${() => setOpen(o => ({ ...o, [h.id]: !o[h.id] }))}>${open[h.id] ? 'Hide delivery log' : 'Delivery log'}</button>
          <${Confirm} label="Delete" question=${'Delete the webhook for ' + h.url + ' and its delivery log?'} onConfirm=${() => remove(h)} />
          <${CopyAsCurl} method="DELETE" path=${path(h)} />
        </div>
        ${editing === h.id ? html`<${EditWebhook} hook=${h} onCancel=${() => setEditing('')}
          onSaved=${n => { setEditing(''); setError(null); setNotice('Saved. The server answers: ' + n.url + ', ' + (n.enabled ? 'enabled' : 'disabled') + ', events ' + n.events.join(', ') + '.'); reload(); }} />` : null}
        ${open[h.id] ? html`<${Deliveries} hook=${h} tick=${logTick} />` : null}
      </li>`)}</ul>` : null}
    </section>`;
}

// creatorText names who made a webhook, so that an owner can tell a
// former member's webhooks: the member list no longer names them.
function creatorText(c) {
  if (!c) return 'not recorded (made before linkbolt kept it)';
  if (c.type === 'key') return 'API key ' + (c.name ? '"' + c.name + '" (' + c.id + ')' : c.id);
  return c.name || c.id;
}

// Deliveries is the delivery log of one webhook, newest first; it reads
// again every two seconds while a delivery is pending.
function Deliveries({ hook, tick }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  const base = '/v1/webhooks/' + hook.id + '/deliveries';

  useEffect(() => {
    let live = true;
    let timer;
    call('GET', base + '?limit=50').then(l => {
      if (!live) return;
      setList(l);
      setError(null);
      if (l.data.some(d => d.status === 'pending')) timer = setTimeout(() => setReload(n => n + 1), 2000);
    }, e => live && setError(e));
    return () => { live = false; clearTimeout(timer); };
  }, [reload, tick]);

  const retry = async d => {
    setError(null);
    setNotice('');
    try {
      const q = await call('POST', base + '/' + d.id + '/retry');
      setNotice('Delivery ' + q.id + ' is queued again: the server answers ' + q.status + ' after ' + count(q.attempts, 'attempt', 'attempts') +
        (q.next_attempt_at ? ', next attempt ' + fmtDate(q.next_attempt_at) : '') + '.' +
        (hook.enabled ? ' The log below shows its state as it changes.' : ' It waits until the webhook is enabled.'));
      setReload(n => n + 1);
    } catch (e) {
      setError(e);
    }
  };

  return html`<section class="deliveries" aria-label=${'Delivery log of ' + hook.url}>
    <div class="actions"><h4>Delivery log</h4>
      <button type="button" class="secondary refresh" onClick=${() => setReload(n => n + 1)}>Refresh</button></div>
    <${Message} error=${error} notice=${notice} />
    ${!list && !error ? html`<p role="status">Loading deliveries…</p>` : null}
    ${list && list.data.length === 0 ? html`<p class="empty">No deliveries yet. Send a test ping to try the webhook.</p>` : null}
    ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id=${'deliveries-' + hook.id}>
      <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Response</th><th scope="col">Last error</th><th scope="col">Next attempt</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.data.map(d => html`<tr key=${d.id} data-delivery=${d.id} data-status=${d.status}>
        <td class="when">${fmtDate(d.created_at)}</td>
        <td><code>${d.event_type}</code></td>
        <td><span class=${'state ' + d.status}>${d.status}</span></td>
        <td class="num attempts">${d.attempts}</td>
        <td class="num code">${d.response_code == null ? '—' : d.response_code}</td>
        <td class="error-text">${d.last_error || '—'}</td>
        <td class="when next">${d.next_attempt_at ? fmtDate(d.next_attempt_at) : '—'}</td>
        <td class="actions">${d.status !== 'pending' ? html`<button type="button" class="secondary retry" onClick=${() => retry(d)}>Retry</button>
          <${CopyAsCurl} method="POST" path=${base + '/' + d.id + '/retry'} />` : null}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
  </section>`;
}

function hookBody(form) {
  const body = { url: form.url.trim(), events: form.events };
  if (form.description.trim()) body.description = form.description.trim();
  return body;
}

function CreateWebhook({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { url: '', description: '', events: [] }, form => call('POST', '/v1/webhooks', hookBody(form)), onCreated);
  const toggle = e => {
    const events = e.target.checked ? [...form.events, e.target.value] : form.events.filter(x => x !== e.target.value);
    set({ target: { name: 'events', value: EVENTS.map(([k]) => k).filter(k => events.includes(k)) } });
  };
  return html`<section class="card" aria-labelledby="create-webhook">
    <h2 id="create-webhook">Create a webhook</h2>
    <form id="create-webhook-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="url" label="URL" type="url" required maxlength="2048" placeholder="https://hooks.example.com/linkbolt" value=${form.url} onInput=${set} error=${f.url} />
        <${Field} id="description" label="Description (optional)" maxlength="500" placeholder="CRM sync" value=${form.description} onInput=${set} error=${f.description} />
      </div>
      <fieldset class="events" aria-describedby=${f.events ? 'events-error' : undefined}>
        <legend>Events</legend>
        ${EVENTS.map(([k, what]) => html`<label class="check"><input type="checkbox" name="events" value=${k} checked=${form.events.includes(k)} onChange=${toggle} /> <code>${k}</code> <span class="hint">when ${what}</span></label>`)}
        ${f.events ? html`<small id="events-error" class="field-error">${f.events}</small>` : null}
      </fieldset>
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create webhook'}</button>
      <${CopyAsCurl} method="POST" path="/v1/webhooks" body=${hookBody(form)} /></div>
    </form>
  </section>`;
}

// editBody is what the edit form sends: every field, so that an emptied
// description is cleared.
function editBody(form) {
  return { url: form.url.trim(), events: form.events, description: form.description.trim(), enabled: form.enabled };
}

// EditWebhook reads the webhook fresh (GET /v1/webhooks/{id}) before it
// fills the form, so a person edits what the server holds now, not what
// the list showed when it was read.
function EditWebhook({ hook, onSaved, onCancel }) {
  const [fresh, setFresh] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let live = true;
    call('GET', '/v1/webhooks/' + hook.id).then(h => live && setFresh(h), e => live && setError(e));
    return () => { live = false; };
  }, [hook.id]);
  if (error) {
    return html`<section class="edit-webhook" aria-label="Edit this webhook"><${Message} error=${error} />
      <div class="actions"><button type="button" class="secondary" onClick=${onCancel}>Close</button></div></section>`;
  }
  if (!fresh) return html`<p role="status" class="edit-webhook">Reading the webhook…</p>`;
  return html`<${EditForm} hook=${fresh} onSaved=${onSaved} onCancel=${onCancel} />`;
}

// EditForm changes a webhook's URL, events, description and whether it
// is enabled, with the API's refusals at the fields.
function EditForm({ hook, onSaved, onCancel }) {
  const path = '/v1/webhooks/' + hook.id;
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { url: hook.url, description: hook.description || '', events: hook.events, enabled: hook.enabled },
    form => call('PATCH', path, editBody(form)), onSaved);
  const setField = e => set({ target: { name: e.target.name.slice('edit_'.length), value: e.target.value } });
  const toggle = e => {
    const events = e.target.checked ? [...form.events, e.target.value] : form.events.filter(x => x !== e.target.value);
    set({ target: { name: 'events', value: EVENTS.map(([k]) => k).filter(k => events.includes(k)) } });
  };
  return html`<section class="edit-webhook" aria-labelledby="edit-webhook">
    <h4 id="edit-webhook">Edit this webhook</h4>
    <form id="edit-webhook-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="edit_url" label="URL" type="url" required maxlength="2048" value=${form.url} onInput=${setField} error=${f.url} />
        <${Field} id="edit_description" label="Description" maxlength="500" value=${form.description} onInput=${setField} error=${f.description} hint="Empty clears it" />
      </div>
      <fieldset class="events" aria-describedby=${f.events ? 'edit_events-error' : undefined}>
        <legend>Events</legend>
        ${EVENTS.map(([k, what]) => html`<label class="check"><input type="checkbox" name="edit_events" value=${k} checked=${form.events.includes(k)} onChange=${toggle} /> <code>${k}</code> <span class="hint">when ${what}</span></label>`)}
        ${f.events ? html`<small id="edit_events-error" class="field-error">${f.events}</small>` : null}
      </fieldset>
      <label class="check an-check"><input type="checkbox" id="edit_enabled" name="edit_enabled" checked=${form.enabled}
        onChange=${e => set({ target: { name: 'enabled', value: e.target.checked } })} /> Enabled</label>
      ${f.enabled ? html`<small class="field-error">${f.enabled}</small>` : null}
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save webhook'}</button>
        <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
        <${CopyAsCurl} method="PATCH" path=${path} body=${editBody(form)} /></div>
    </form>
  </section>`;
}
