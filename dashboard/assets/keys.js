// keys.js is the API keys page: create, the key shown once, list, rotate,
// revoke, and each key's details read fresh, where an owner keeps a key
// working when its creator is disabled.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, fmtNumber, useAction, useApiForm, useList } from './ui.js';

export function KeysPage({ workspace }) {
  const { list, error, setError, reload } = useList('/v1/keys');
  const { act, notice, setNotice } = useAction({ reload, setError });
  const [shown, setShown] = useState(null); // a key just created or rotated
  const [open, setOpen] = useState({}); // key id → its details are shown

  const rotate = k => act(async () => {
    const n = await call('POST', '/v1/keys/' + k.id + '/rotate');
    setShown({ ...n, rotatedFrom: k });
  });
  const graceOf = k => list && (list.data.find(x => x.id === k.id) || {}).grace_ends_at;
  const revoke = k => act(async () => {
    await call('DELETE', '/v1/keys/' + k.id);
    setShown(null);
    return 'Revoked ' + k.name + ' (' + k.start + '…). It no longer works.';
  });

  return html`<h1>API keys</h1>
    <${CreateKey} onCreated=${k => { setShown(k); setNotice(''); reload(); }} />
    ${shown ? html`<section class="card once" aria-labelledby="new-key">
      <h2 id="new-key">${shown.rotatedFrom ? 'New key for ' + shown.name : 'Your new key ' + shown.name}</h2>
      <p class="warning"><strong>Copy this key now. It is shown only this once and cannot be shown again.</strong></p>
      <p class="secret"><code id="new-key-value">${shown.key}</code> <${CopyButton} text=${shown.key} label="Copy key" id="copy-key" /></p>
      ${shown.rotatedFrom ? html`<p>The old key keeps working until ${fmtDate(graceOf(shown.rotatedFrom))}${graceOf(shown.rotatedFrom) ? html` (<${Countdown} until=${graceOf(shown.rotatedFrom)} />)` : null}.</p>` : null}
      <button type="button" class="secondary" id="key-copied" onClick=${() => setShown(null)}>I have copied it</button>
    </section>` : null}
    <section aria-labelledby="keys-list">
      <h2 id="keys-list">Keys of this workspace</h2>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading keys…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">No keys yet. Create one above to use the API from scripts.</p>` : null}
      ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="keys">
        <thead><tr><th scope="col">Name</th><th scope="col">Start</th><th scope="col">Scope</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col" class="num">Requests</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${list.data.map(k => [html`<tr key=${k.id} data-key=${k.id}>
          <td>${k.name}</td>
          <td><code>${k.start}…</code></td>
          <td>${k.scope.replace('_', ' ')}${k.resources ? html`<br /><small class="key-limited">only ${k.resources.map(resourceName).join(', ')}</small>` : null}</td>
          <td><span class=${'state ' + k.state}>${k.state}</span>${k.creator_disabled && !k.keep_when_creator_disabled ? html`<br /><small class="reason">refused: its creator is disabled</small>` : null}${k.state === 'grace' && k.grace_ends_at ? html`<br /><small>until ${fmtDate(k.grace_ends_at)}<br /><${Countdown} until=${k.grace_ends_at} /></small>` : null}</td>
          <td class="when">${fmtDate(k.created_at)}</td>
          <td class="when">${k.expires_at ? fmtDate(k.expires_at) : 'never'}</td>
          <td class="when">${k.last_used_at ? fmtDate(k.last_used_at) : 'never'}</td>
          <td class="num">${fmtNumber(k.request_count)}</td>
          <td class="actions"><button type="button" class="secondary details" aria-expanded=${open[k.id] ? 'true' : 'false'} aria-controls=${'details-' + k.id}
              aria-label=${(open[k.id] ? 'Hide the details of ' : 'Details of ') + k.name} onClick=${() => setOpen(o => ({ ...o, [k.id]: !o[k.id] }))}>${open[k.id] ? 'Hide details' : 'Details'}</button>
            ${k.state === 'active' ? html`<button type="button" class="secondary rotate" onClick=${() => rotate(k)}>Rotate</button>
            <${CopyAsCurl} method="POST" path=${'/v1/keys/' + k.id + '/rotate'} />` : null}
            ${k.state === 'active' || k.state === 'grace' ? html`<${Confirm} label="Revoke" question=${'Revoke ' + k.name + '? Scripts using it stop working at once.'} onConfirm=${() => revoke(k)} />
            <${CopyAsCurl} method="DELETE" path=${'/v1/keys/' + k.id} />` : null}</td>
        </tr>`, open[k.id] ? html`<tr key=${k.id + '-details'} class="key-details-row"><td colspan="9" id=${'details-' + k.id}>
          <${KeyDetails} id=${k.id} role=${workspace && workspace.role} onChanged=${reload} /></td></tr>` : null])}</tbody>
      </table></div>` : null}
    </section>`;
}

// KeyDetails reads one key fresh (GET /v1/keys/{id}) each time it opens:
// who made it, what replaced it, and whether it keeps working when its
// creator is disabled, which an owner of the workspace changes here.
function KeyDetails({ id, role, onChanged }) {
  const path = '/v1/keys/' + id;
  const [key, setKey] = useState(null);
  const [error, setError] = useState(null);
  const [keep, setKeep] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState(null);
  const [notice, setNotice] = useState('');
  useEffect(() => {
    let live = true;
    call('GET', path).then(k => { if (live) { setKey(k); setKeep(k.keep_when_creator_disabled); } }, e => live && setError(e));
    return () => { live = false; };
  }, [id]);
  const save = async e => {
    e.preventDefault();
    setSaving(true);
    setSaveError(null);
    setNotice('');
    try {
      const k = await call('PATCH', path, { keep_when_creator_disabled: keep });
      setKey(k);
      setKeep(k.keep_when_creator_disabled);
      setNotice(k.keep_when_creator_disabled
        ? 'Saved: ' + k.name + ' keeps working when its creator is disabled or leaves the workspace.'
        : 'Saved: ' + k.name + ' stops when its creator is disabled or leaves the workspace.');
      onChanged();
    } catch (err) {
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };
  if (error) return html`<${Message} error=${error} />`;
  if (!key) return html`<p role="status">Reading the key…</p>`;
  const by = key.created_by ? (key.created_by.type === 'user' ? 'a user, ' : 'the API key ') + key.created_by.id : 'not recorded';
  return html`<section class="key-details" aria-label=${'Details of ' + key.name}>
    <dl class="facts">
      <dt>ID</dt><dd><code class="key-id">${key.id}</code></dd>
      <dt>State</dt><dd class="key-state">${key.state}${key.revoked_at ? ', revoked ' + fmtDate(key.revoked_at) : ''}${key.grace_ends_at && key.state === 'grace' ? ', works until ' + fmtDate(key.grace_ends_at) : ''}</dd>
      <dt>Made by</dt><dd>${by}</dd>
      ${key.replaced_by ? html`<dt>Replaced by</dt><dd><code>${key.replaced_by}</code></dd>` : null}
      <dt>Its creator</dt><dd class="creator-state">${key.creator_disabled
        ? (key.keep_when_creator_disabled ? 'is disabled or gone; the key is kept working' : 'is disabled or gone, so the key is refused')
        : 'is active'}</dd>
    </dl>
    <form class="keep-form" id=${'keep-' + key.id} onSubmit=${save}>
      <label class="keep-check"><input type="checkbox" id=${'keep-input-' + key.id} name="keep_when_creator_disabled" checked=${keep}
        onChange=${e => setKeep(e.target.checked)} /> Keep this key working when its creator is disabled or leaves the workspace</label>
      <p class="hint">${role === 'owner'
        ? 'A key stops when the person who made it is disabled or removed; keep it for a script the workspace still needs.'
        : 'Only an owner of the workspace may change this' + (role ? ' (your role: ' + role.replace('_', ' ') + ').' : '.')}</p>
      <${Message} error=${saveError} notice=${notice} />
      <div class="actions"><button type="submit" class="secondary" disabled=${saving || keep === key.keep_when_creator_disabled}>${saving ? 'Saving…' : 'Save'}</button>
        <${CopyAsCurl} method="PATCH" path=${path} body=${{ keep_when_creator_disabled: keep }} /></div>
    </form>
  </section>`;
}

// Countdown says how long a rotated key's grace period has left ("old key
// works for 23 hr 59 min more" in the browser's locale), again each minute.
function Countdown({ until }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 60000);
    return () => clearInterval(t);
  }, []);
  const left = Math.floor((new Date(until).getTime() - now) / 60000);
  if (left < 0) return html`<span class="countdown">the old key's grace period is over</span>`;
  if (left < 1) return html`<span class="countdown">old key works for less than a minute more</span>`;
  const unit = (n, u) => new Intl.NumberFormat(undefined, { style: 'unit', unit: u, unitDisplay: 'short' }).format(n);
  const h = Math.floor(left / 60), m = left % 60;
  const text = (h > 0 ? unit(h, 'hour') + (m > 0 ? ' ' : '') : '') + (m > 0 ? unit(m, 'minute') : '');
  return html`<span class="countdown" title=${'until ' + fmtDate(until)}>old key works for ${text} more</span>`;
}

// RESOURCES are what a key may be limited to, with their labels.
const RESOURCES = [['links', 'Links'], ['analytics', 'Analytics'], ['campaigns', 'Campaigns'], ['domains', 'Domains'],
  ['webhooks', 'Webhooks'], ['qr_codes', 'QR designs'], ['utm_templates', 'UTM templates'], ['keys', 'API keys'],
  ['members', 'Members'], ['audit', 'Audit log'], ['imports', 'Imports']];
const resourceName = r => (RESOURCES.find(([v]) => v === r) || [r, r])[1];

function keyBody(form) {
  const body = { name: form.name, scope: form.scope };
  if (form.limited) body.resources = form.resources;
  // An expiry date means the end of that day in the browser's time zone.
  if (form.expires) body.expires_at = new Date(form.expires + 'T23:59:59').toISOString();
  return body;
}

function CreateKey({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { name: '', scope: 'read_write', expires: '', limited: false, resources: [] }, form => call('POST', '/v1/keys', keyBody(form)), onCreated);
  const body = keyBody(form);
  const setLimited = e => set({ target: { name: 'limited', value: e.target.value === 'some' } });
  const toggle = e => set({ target: { name: 'resources', value: e.target.checked
    ? [...form.resources, e.target.value] : form.resources.filter(r => r !== e.target.value) } });
  return html`<section class="card" aria-labelledby="create-key">
    <h2 id="create-key">Create a key</h2>
    <form id="create-key-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="name" label="Name" required maxlength="100" placeholder="deploy script" value=${form.name} onInput=${set} error=${f.name} />
        <div class="field"><label for="scope">Scope</label>
          <select id="scope" name="scope" value=${form.scope} onChange=${set}>
            <option value="read_write">read and write</option>
            <option value="read">read only</option>
          </select>${f.scope ? html`<small class="field-error">${f.scope}</small>` : null}</div>
        <${Field} id="expires" label="Expires (optional)" type="date" value=${form.expires} onInput=${set} error=${f.expires_at} hint="Never, when empty" />
      </div>
      <fieldset class="key-resources" aria-describedby="key-resources-hint">
        <legend>Reaches</legend>
        <label><input type="radio" name="reach" value="all" checked=${!form.limited} onChange=${setLimited} /> Everything in the workspace its scope allows</label>
        <label><input type="radio" name="reach" id="key-limited" value="some" checked=${form.limited} onChange=${setLimited} /> Only:</label>
        ${form.limited ? html`<div class="checks" id="key-resource-list">${RESOURCES.map(([v, l]) => html`<label><input type="checkbox" name="resources" value=${v}
          checked=${form.resources.includes(v)} onChange=${toggle} /> ${l}</label>`)}</div>` : null}
        <small id="key-resources-hint" class="hint">A key limited to some kinds of record is refused (403) everywhere else, and makes only keys limited as much.</small>
        ${f.resources ? html`<small class="field-error">${f.resources}</small>` : null}
      </fieldset>
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button>
      <${CopyAsCurl} method="POST" path="/v1/keys" body=${body} /></div>
    </form>
  </section>`;
}
