// keys.js is the API keys page: create, the key shown once, list, rotate,
// revoke.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, fmtNumber, useApiForm, useList } from './ui.js';

export function KeysPage() {
  const { list, setList, error, setError, reload } = useList('/v1/keys');
  const [notice, setNotice] = useState('');
  const [shown, setShown] = useState(null); // a key just created or rotated

  const act = async (what, f) => {
    setError(null);
    setNotice('');
    try {
      await f();
      reload();
    } catch (e) {
      setError(e);
    }
  };
  const rotate = k => act('rotate', async () => {
    const n = await call('POST', '/v1/keys/' + k.id + '/rotate');
    setShown({ ...n, rotatedFrom: k });
  });
  const graceOf = k => list && (list.data.find(x => x.id === k.id) || {}).grace_ends_at;
  const revoke = k => act('revoke', async () => {
    await call('DELETE', '/v1/keys/' + k.id);
    setShown(null);
    setNotice('Revoked ' + k.name + ' (' + k.start + '…). It no longer works.');
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
        <tbody>${list.data.map(k => html`<tr key=${k.id} data-key=${k.id}>
          <td>${k.name}</td>
          <td><code>${k.start}…</code></td>
          <td>${k.scope.replace('_', ' ')}</td>
          <td><span class=${'state ' + k.state}>${k.state}</span>${k.state === 'grace' && k.grace_ends_at ? html`<br /><small>until ${fmtDate(k.grace_ends_at)}<br /><${Countdown} until=${k.grace_ends_at} /></small>` : null}</td>
          <td class="when">${fmtDate(k.created_at)}</td>
          <td class="when">${k.expires_at ? fmtDate(k.expires_at) : 'never'}</td>
          <td class="when">${k.last_used_at ? fmtDate(k.last_used_at) : 'never'}</td>
          <td class="num">${fmtNumber(k.request_count)}</td>
          <td class="actions">${k.state === 'active' ? html`<button type="button" class="secondary rotate" onClick=${() => rotate(k)}>Rotate</button>
            <${CopyAsCurl} method="POST" path=${'/v1/keys/' + k.id + '/rotate'} />` : null}
            ${k.state === 'active' || k.state === 'grace' ? html`<${Confirm} label="Revoke" question=${'Revoke ' + k.name + '? Scripts using it stop working at once.'} onConfirm=${() => revoke(k)} />
            <${CopyAsCurl} method="DELETE" path=${'/v1/keys/' + k.id} />` : null}</td>
        </tr>`)}</tbody>
      </table></div>` : null}
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

function keyBody(form) {
  const body = { name: form.name, scope: form.scope };
  // An expiry date means the end of that day in the browser's time zone.
  if (form.expires) body.expires_at = new Date(form.expires + 'T23:59:59').toISOString();
  return body;
}

function CreateKey({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { name: '', scope: 'read_write', expires: '' }, form => call('POST', '/v1/keys', keyBody(form)), onCreated);
  const body = keyBody(form);
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
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create key'}</button>
      <${CopyAsCurl} method="POST" path="/v1/keys" body=${body} /></div>
    </form>
  </section>`;
}
