// admin.js is the instance admin's page: every user (create, disable,
// enable), the audit log of the whole instance, a backup of the data
// file downloaded with the session's token (never in a URL), the
// destination blocklist and the country database in use.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call, fetchFile, saveFile, ApiError } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, fmtDate, count, useAction, useList, useApiForm, usePages } from './ui.js';
import { actorText, changesText } from './audit.js';
import { Blocklist } from './admin_blocklist.js';
import { CountryDatabase } from './admin_geoip.js';
import { OrphanVisits } from './orphans.js';
import { browserZone } from './analytics.js';
import { AbuseReports } from './admin_abuse.js';

export function AdminPage({ me }) {
  const [blocked, setBlocked] = useState(0); // a block from a report shows in the blocklist
  return html`<h1>Admin</h1>
    <p class="hint">The whole instance: its users, its audit log and its data file. Only you, the instance admin, see this page.</p>
    <${Users} me=${me} />
    <${Backup} />
    <${AbuseReports} onBlocked=${() => setBlocked(n => n + 1)} />
    <${Blocklist} key=${blocked} />
    <${CountryDatabase} />
    <${OrphanVisits} path="/v1/admin/orphan-visits" params=${adminOrphanParams} admin=${true} />
    <${InstanceLog} me=${me} />`;
}

// adminOrphanParams: the primary host's orphan visits of the last 7 days.
const adminOrphanParams = new URLSearchParams({ range: '7d', tz: browserZone() });

function Users({ me }) {
  const { list, error, setError, reload } = useList('/v1/users');
  const { act, busy, notice, setNotice } = useAction({ reload, setError });

  const setDisabled = (u, disabled) => act(async () => {
    await call('PATCH', '/v1/users/' + u.id, { disabled });
    return disabled ? u.email + ' is disabled: they cannot sign in, and their sessions and keys stopped working.'
      : u.email + ' is enabled again: they can sign in.';
  }, u.id);

  return html`<section aria-labelledby="users-title">
    <h2 id="users-title">Users</h2>
    <${CreateUser} onCreated=${async u => { await reload(); setNotice('Created ' + u.email + '. Give them the password; they change it on their Account page, and join workspaces by invitation.'); }} />
    <${Message} error=${error} notice=${notice} />
    ${!list && !error ? html`<p role="status">Loading users…</p>` : null}
    ${list && list.data.length === 0 ? html`<p class="empty">No users.</p>` : null}
    ${list && list.data.length > 0 ? html`<p class="hint">${count(list.data.length, 'user', 'users')}, oldest first.</p>
      <div class="table-wrap"><table id="users">
      <thead><tr><th scope="col">E-mail</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.data.map(u => html`<tr key=${u.id} data-user=${u.id}>
        <td>${u.email}${u.admin ? html` <span class="tag">instance admin</span>` : null}</td>
        <td>${u.name || '—'}</td>
        <td><span class=${'state ' + (u.disabled ? 'disabled' : 'enabled')}>${u.disabled ? 'disabled' : 'active'}</span></td>
        <td class="when">${fmtDate(u.created_at)}</td>
        <td><div class="row-actions">${u.id === me.id ? html`<small class="hint">you</small>` : u.disabled
          ? html`<${Confirm} label="Enable" question=${'Enable ' + u.email + '? They can sign in again.'} busy=${busy === u.id} onConfirm=${() => setDisabled(u, false)} />
            <${CopyAsCurl} method="PATCH" path=${'/v1/users/' + u.id} body=${{ disabled: false }} />`
          : html`<${Confirm} label="Disable" question=${'Disable ' + u.email + '? Their sessions and keys stop at once.'} busy=${busy === u.id} onConfirm=${() => setDisabled(u, true)} />
            <${CopyAsCurl} method="PATCH" path=${'/v1/users/' + u.id} body=${{ disabled: true }} />`}</div></td>
      </tr>`)}</tbody>
    </table></div>` : null}
  </section>`;
}

const noUser = { email: '', name: '', password: '' };

function CreateUser({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(noUser, form => call('POST', '/v1/users', form), onCreated);
  return html`<details class="card" id="create-user">
    <summary><strong>Create a user</strong></summary>
    <form id="create-user-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="user-email" name="email" label="E-mail" type="email" required maxlength="254" autocomplete="off" value=${form.email} onInput=${set} error=${f.email} />
        <${Field} id="user-name" name="name" label="Name" required maxlength="100" autocomplete="off" value=${form.name} onInput=${set} error=${f.name} />
        <${Field} id="user-password" name="password" label="Password (at least 10 characters)" type="password" required autocomplete="new-password" value=${form.password} onInput=${set} error=${f.password} hint="You hand it on; they change it." />
      </div>
      <${Message} error=${f.email || f.name || f.password ? null : error} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create user'}</button>
      <${CopyAsCurl} method="POST" path="/v1/users" body=${{ ...form, password: '…' }} /></div>
    </form>
  </details>`;
}

// filename reads the name a Content-Disposition header gives, if any.
function filename(disposition) {
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition || '');
  if (m) return decodeURIComponent(m[1]);
  return 'linkbolt-' + new Date().toISOString().slice(0, 10) + '.db';
}

function Backup() {
  const { act, busy, error, notice } = useAction();
  const download = () => act(async () => {
    try {
      const res = await fetchFile('/v1/admin/backup');
      const blob = await res.blob();
      const name = filename(res.headers.get('Content-Disposition'));
      saveFile(blob, name);
      return 'Saved ' + name + ' (' + Math.ceil(blob.size / 1024).toLocaleString() + ' KB).';
    } catch (e) {
      throw e instanceof ApiError ? e : new ApiError(0, { detail: 'The backup could not be downloaded: the server cannot be reached or the copy was cut short. Try again.' });
    }
  }, 'backup');
  return html`<section class="card" aria-labelledby="backup-title">
    <h2 id="backup-title">Backup</h2>
    <p>A consistent copy of the whole data file (every workspace, user, key, link and click), taken while linkbolt keeps serving.
      It is a bbolt file: check it with <code>linkbolt check --file FILE</code>. To restore, stop the server and
      run <code>linkbolt restore --from FILE</code> (it checks the backup first and keeps the replaced file beside it). Keep it safe: it
      holds everything, password and key hashes and the HTTPS certificates' keys too.</p>
    <${Message} error=${error} notice=${notice} />
    <div class="actions"><button type="button" id="download-backup" disabled=${!!busy} onClick=${download}>${busy ? 'Downloading…' : 'Download a backup'}</button>
      <${CopyAsCurl} method="GET" path="/v1/admin/backup" /></div>
  </section>`;
}

// InstanceLog is the audit log of the whole instance, newest first, with
// a workspace filter and "Load more".
function InstanceLog({ me }) {
  const [ws, setWs] = useState('');
  const { entries, setEntries, cursor, error, busy, load: loadPage } = usePages();
  const names = Object.fromEntries(me.workspaces.map(w => [w.id, w.name]));

  const load = after => loadPage('/v1/admin/audit-log' + (ws ? '?' + new URLSearchParams({ workspace_id: ws }) : ''), after);
  useEffect(() => { setEntries(null); load(); }, [ws]);

  return html`<section aria-labelledby="instance-log">
    <h2 id="instance-log">Audit log of the instance</h2>
    <p class="hint">Every workspace's entries and the instance's own (sign-ins with an unknown e-mail, backup downloads), newest first.</p>
    <div class="field narrow"><label for="log-workspace">Workspace</label>
      <select id="log-workspace" value=${ws} onChange=${e => setWs(e.target.value)}>
        <option value="">Every workspace and the instance</option>
        ${me.workspaces.map(w => html`<option value=${w.id}>${w.name}</option>`)}
      </select></div>
    <${Message} error=${error} />
    ${!entries && !error ? html`<p role="status">Loading the audit log…</p>` : null}
    ${entries && entries.length === 0 ? html`<p class="empty">No entries.</p>` : null}
    ${entries && entries.length > 0 ? html`<div class="table-wrap"><table id="instance-audit">
      <thead><tr><th scope="col">Time</th><th scope="col">Workspaces</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th><th scope="col">Changes</th></tr></thead>
      <tbody>${entries.map(e => html`<tr key=${e.id} data-action=${e.action}>
        <td class="when">${fmtDate(e.time)}</td>
        <td>${(e.workspace_ids || []).length === 0 ? html`<span class="hint">instance</span>` : e.workspace_ids.map(id => html`<div>${names[id] || id}</div>`)}</td>
        <td>${actorText(e.actor)}</td>
        <td><code>${e.action}</code></td>
        <td>${e.target.type}${e.target.id ? html`<br /><small><code>${e.target.id}</code></small>` : null}</td>
        <td>${e.address || '—'}</td>
        <td class="changes">${changesText(e.changes).map(l => html`<div>${l}</div>`)}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${cursor ? html`<div class="pager"><button type="button" class="secondary" id="instance-audit-more" disabled=${busy} onClick=${() => load(cursor)}>${busy ? 'Loading…' : 'Load more'}</button></div>` : null}
  </section>`;
}
