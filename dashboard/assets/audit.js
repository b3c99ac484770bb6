// audit.js is the owner's audit log: the entries newest first with
// filters, "Load more" through next_cursor, and the CSV or JSON lines
// export saved as a file.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call, fetchFile, saveFile, ApiError } from './api.js';
import { Message, fmtDate, usePages } from './ui.js';

const actions = ['auth.login_succeeded', 'auth.login_failed', 'auth.logout', 'auth.logout_all',
  'user.password_changed', 'user.created', 'user.disabled', 'user.enabled', 'user.renamed',
  'key.created', 'key.rotated', 'key.revoked', 'key.grace_ended', 'key.expired', 'key.updated',
  'member.invited', 'member.joined', 'member.role_changed', 'member.removed', 'member.left', 'invitation.revoked',
  'webhook.created', 'webhook.secret_rolled', 'webhook.disabled', 'webhook.enabled', 'webhook.updated', 'webhook.deleted',
  'domain.added', 'domain.verified', 'domain.unverified', 'domain.updated', 'domain.removed',
  'workspace.created', 'workspace.renamed', 'workspace.plan_changed', 'backup.downloaded'];
const ranges = [['all', 'Every entry kept'], ['today', 'Today'], ['yesterday', 'Yesterday'], ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'], ['30d', 'Last 30 days'], ['90d', 'Last 90 days'], ['custom', 'From … to …']];

// query turns the filters into the list's query string.
function query(filters, extra) {
  const q = new URLSearchParams();
  for (const k of ['action', 'actor', 'target']) if (filters[k].trim()) q.set(k, filters[k].trim());
  if (filters.range === 'custom') {
    // The browser's local times; the API rounds them to whole hours.
    if (filters.start) q.set('start', new Date(filters.start).toISOString());
    if (filters.end) q.set('end', new Date(filters.end).toISOString());
  } else if (filters.range !== 'all') {
    q.set('range', filters.range);
    q.set('tz', Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  }
  for (const [k, v] of Object.entries(extra || {})) q.set(k, v);
  const s = q.toString();
  return '/v1/audit-log' + (s ? '?' + s : '');
}

// changesText writes an entry's changes as "field: before → after" lines.
export function changesText(changes) {
  return Object.entries(changes || {}).map(([k, [before, after]]) =>
    k + ': ' + (before === null ? '—' : before) + ' → ' + (after === null ? '—' : after));
}

export function actorText(a) {
  if (a.type === 'system') return 'system';
  return (a.type === 'key' ? 'key ' : '') + (a.name || a.id || 'unknown');
}

const empty = { action: '', actor: '', target: '', range: 'all', start: '', end: '' };

export function AuditPage() {
  const [form, setForm] = useState(empty);
  const [filters, setFilters] = useState(empty);
  const { entries, setEntries, cursor, error, setError, busy, load: loadPage } = usePages();
  const [saved, setSaved] = useState('');
  const [people, setPeople] = useState([]); // suggestions for the actor filter

  useEffect(() => {
    let live = true;
    call('GET', '/v1/members').then(l => live && setPeople(l.data), () => {});
    return () => { live = false; };
  }, []);

  const load = (f, after) => loadPage(query(f), after);
  useEffect(() => { load(filters); }, [filters]);

  const fe = (error && error.fields) || {};
  const set = e => { const { name, value } = e.target; setForm(f => ({ ...f, [name]: value })); };
  const apply = e => { e.preventDefault(); setEntries(null); setFilters({ ...form }); };
  const reset = () => { setForm(empty); setEntries(null); setFilters(empty); };

  // download fetches the export with the session's token (never in a URL)
  // and saves it through an object URL.
  const download = async format => {
    setError(null);
    setSaved('');
    try {
      const res = await fetchFile(query(filters, { format }));
      const name = 'audit-log.' + (format === 'csv' ? 'csv' : 'jsonl');
      saveFile(await res.blob(), name);
      setSaved('Saved ' + name + '.');
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, { detail: 'The server cannot be reached. Check that linkbolt is running.' }));
    }
  };

  return html`<h1>Audit log</h1>
    <p class="hint">Who changed what in this workspace, newest first. Only owners read it.</p>
    <form id="audit-filters" class="card" onSubmit=${apply}>
      <div class="row">
        <div class="field"><label for="audit-action">Action</label>
          <select id="audit-action" name="action" value=${form.action} onChange=${set}>
            <option value="">Any action</option>
            ${actions.map(a => html`<option value=${a}>${a}</option>`)}
          </select></div>
        <div class="field"><label for="audit-actor">Actor</label>
          <input id="audit-actor" name="actor" list="audit-actors" value=${form.actor} onInput=${set} placeholder="usr_…, key_… or system" />
          <datalist id="audit-actors"><option value="system">linkbolt itself</option>
            ${people.map(m => html`<option value=${m.user_id}>${m.name ? m.name + ' (' + m.email + ')' : m.email}</option>`)}</datalist></div>
        <div class="field"><label for="audit-target">Target</label>
          <input id="audit-target" name="target" value=${form.target} onInput=${set} placeholder="an object's ID" /></div>
        <div class="field"><label for="audit-range">Time</label>
          <select id="audit-range" name="range" value=${form.range} onChange=${set}>
            ${ranges.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
          </select></div>
        ${form.range === 'custom' ? html`<div class="field"><label for="audit-start">From</label>
          <input id="audit-start" name="start" type="datetime-local" value=${form.start} onInput=${set} aria-invalid=${fe.start ? 'true' : undefined} />
          ${fe.start ? html`<small id="audit-start-error" class="field-error">${fe.start}</small>` : null}</div>
        <div class="field"><label for="audit-end">To</label>
          <input id="audit-end" name="end" type="datetime-local" value=${form.end} onInput=${set} aria-invalid=${fe.end ? 'true' : undefined} />
          ${fe.end ? html`<small id="audit-end-error" class="field-error">${fe.end}</small>` : null}</div>` : null}
      </div>
      <div class="actions"><button type="submit">Filter</button>
        <button type="button" class="secondary" id="audit-clear" onClick=${reset}>Clear filters</button>
        <button type="button" class="secondary" id="audit-csv" onClick=${() => download('csv')}>Download CSV</button>
        <button type="button" class="secondary" id="audit-jsonl" onClick=${() => download('jsonl')}>Download JSON lines</button></div>
    </form>
    <${Message} error=${error} notice=${saved} />
    ${!entries && !error ? html`<p role="status">Loading the audit log…</p>` : null}
    ${entries && entries.length === 0 ? html`<p class="empty">No entries${filters === empty ? '' : ' match these filters'}.</p>` : null}
    ${entries && entries.length > 0 ? html`<div class="table-wrap"><table id="audit">
      <thead><tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th><th scope="col">Changes</th></tr></thead>
      <tbody>${entries.map(e => html`<tr key=${e.id} data-entry=${e.id} data-action=${e.action}>
        <td class="when">${fmtDate(e.time)}</td>
        <td>${actorText(e.actor)}</td>
        <td><code>${e.action}</code></td>
        <td>${e.target.type}${e.target.id ? html`<br /><small><code>${e.target.id}</code></small>` : null}</td>
        <td>${e.address || '—'}</td>
        <td class="changes">${changesText(e.changes).map(l => html`<div>${l}</div>`)}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${cursor ? html`<div class="pager"><button type="button" class="secondary" id="audit-more" disabled=${busy} onClick=${() => load(filters, cursor)}>${busy ? 'Loading…' : 'Load more'}</button></div>` : null}`;
}
