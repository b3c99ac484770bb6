// admin_abuse.js: the Admin page's abuse reports, sent by visitors from a
// link's preview page (or POST /v1/abuse-reports): the open ones by
// default, newest first, each with a way to block its destination's host
// (the blocklist), and to resolve, dismiss or reopen it.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, CopyAsCurl, fmtDate, fmtNumber, useAction, useList } from './ui.js';

const STATUSES = [['open', 'Open'], ['resolved', 'Resolved'], ['dismissed', 'Dismissed'], ['all', 'All']];

const hostOf = u => { try { return new URL(u).hostname; } catch { return ''; } };

export function AbuseReports({ onBlocked }) {
  const [status, setStatus] = useState('open');
  const reports = useList('/v1/admin/abuse-reports?status=' + status);
  const { act, busy, notice } = useAction(reports);
  const setReport = (r, to, said) => act(async () => {
    await call('PATCH', '/v1/admin/abuse-reports/' + r.id, { status: to });
    return said;
  }, r.id);
  const block = r => act(async () => {
    const host = hostOf(r.destination);
    if (!confirm('Block ' + host + ' and its subdomains for every workspace? Links to it answer 410 from now on.')) return '';
    try {
      await call('POST', '/v1/admin/blocklist', { entry: host });
    } catch (e) {
      if (e.status !== 409) throw e; // blocked already: resolve the report all the same
    }
    await call('PATCH', '/v1/admin/abuse-reports/' + r.id, { status: 'resolved' });
    onBlocked();
    return 'Blocked ' + host + ' and resolved the report.';
  }, r.id);
  const list = reports.list ? reports.list.data : null;
  return html`<section aria-labelledby="abuse-title" class="card" id="abuse-reports">
    <h2 id="abuse-title">Abuse reports</h2>
    <p class="hint">Visitors report links from a link's preview page (the address with “+” at the end). Reports of one link for one reason are counted as one.</p>
    <div class="row"><div class="field"><label for="abuse-status">Show</label>
      <select id="abuse-status" value=${status} onChange=${e => setStatus(e.target.value)}>
        ${STATUSES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
      </select></div></div>
    <${Message} error=${reports.error} notice=${notice} />
    ${!list && !reports.error ? html`<p role="status">Loading the reports…</p>` : null}
    ${list && list.length === 0 ? html`<p class="empty">${status === 'open' ? 'No open reports.' : 'No reports.'}</p>` : null}
    ${list && list.length > 0 ? html`<div class="table-wrap"><table id="abuse-report-list">
      <thead><tr><th scope="col">Short link</th><th scope="col">Reason</th><th scope="col" class="num">Reports</th><th scope="col">Last</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.map(r => html`<tr key=${r.id} data-report=${r.id}>
        <td><strong>${r.short_url.replace(/^https?:\/\//, '')}</strong><br /><span class="an-dest">→ ${r.destination}</span>
          ${r.details ? html`<br /><q class="report-details">${r.details}</q>` : null}${r.contact ? html`<br /><small>from ${r.contact}</small>` : null}</td>
        <td>${r.reason}</td>
        <td class="num">${fmtNumber(r.count)}</td>
        <td class="when">${fmtDate(r.updated_at)}</td>
        <td><span class=${'state ' + r.status}>${r.status}</span></td>
        <td class="actions">${r.status === 'open'
          ? html`<button type="button" class="danger" disabled=${!!busy} aria-label=${'Block ' + hostOf(r.destination)} onClick=${() => block(r)}>Block ${hostOf(r.destination)}</button>
            <button type="button" class="secondary" disabled=${!!busy} onClick=${() => setReport(r, 'resolved', 'Resolved.')}>Resolved</button>
            <button type="button" class="secondary" disabled=${!!busy} onClick=${() => setReport(r, 'dismissed', 'Dismissed.')}>Dismiss</button>
            <${CopyAsCurl} method="PATCH" path=${'/v1/admin/abuse-reports/' + r.id} body=${{ status: 'resolved' }} />`
          : html`<button type="button" class="secondary" disabled=${!!busy} onClick=${() => setReport(r, 'open', 'Reopened.')}>Reopen</button>`}</td>
      </tr>`)}</tbody></table></div>` : null}
  </section>`;
}
