// import.js is the Import page: links, their click totals and dated clicks
// moved in from another shortener through POST /v1/imports, a dry run
// first, then the import itself, with a report of what was imported,
// skipped or failed and why.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, fmtNumber, count } from './ui.js';

// SOURCES are what can be imported, in the order of the choice: a file a
// shortener exports, or its API. from is what the route takes.
const SOURCES = [
  { id: 'csv', from: 'csv', label: 'CSV file (url, alias, tags, title, created_at, clicks)', file: 'CSV file',
    hint: 'A header line naming the columns: url is required; alias, tags (separated by |, or by commas inside quotes), title, created_at (2024-01-15T10:00:00Z, 2024-01-15 10:00:00 or 2024-01-15; UTC unless it says otherwise) and clicks are optional.' },
  { id: 'bitly', from: 'bitly', label: 'Bitly: its CSV export', file: 'Bitly export (CSV)',
    hint: 'The CSV Bitly\'s "Export" of your links gives.' },
  { id: 'yourls', from: 'yourls', label: 'YOURLS: its tables as CSV', file: 'yourls_url table (CSV)', log: true,
    hint: 'The yourls_url table exported as CSV with its header line (phpMyAdmin, or SELECT … INTO OUTFILE).' },
  { id: 'yourls-api', from: 'yourls', label: 'YOURLS: its API', api: 'YOURLS',
    url: 'https://sho.rt/yourls-api.php', key: 'Your signature token (Tools page of YOURLS\'s admin), or username:password. YOURLS\'s API gives click totals only: for dated clicks, import its tables as CSV.' },
  { id: 'shlink', from: 'shlink', label: 'Shlink: its API', api: 'Shlink',
    url: 'https://s.example.com', key: 'An API key of your Shlink (shlink api-key:generate). Its short URLs come with every visit.' },
  { id: 'kutt', from: 'kutt', label: 'Kutt: its API', api: 'Kutt',
    url: 'https://kutt.it', key: 'The API key from your Kutt\'s settings. Kutt gives dated clicks for the last 30 days; older clicks count in totals.' },
];

// readText reads a chosen file as text.
function readText(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(new Error('The file ' + file.name + ' cannot be read: ' + (r.error ? r.error.message : 'unknown error') + '.'));
    r.readAsText(file);
  });
}

// STATUS says an item's status as a person reads it.
const STATUS = { imported: 'imported', skipped: 'skipped', failed: 'failed', exists: 'already imported' };

export function ImportPage() {
  const [sourceId, setSourceId] = useState('csv');
  const [file, setFile] = useState(null); // { name, text }
  const [log, setLog] = useState(null);
  const [form, setForm] = useState({ url: '', api_key: '', on_conflict: 'skip' });
  const [reading, setReading] = useState(false);
  const [busy, setBusy] = useState('');
  const [error, setError] = useState(null);
  const [report, setReport] = useState(null); // the last answer
  const src = SOURCES.find(s => s.id === sourceId);
  const fields = (error && error.fields) || {};

  // changed forgets the report: it no longer says what Import would do.
  const changed = () => { setReport(null); setError(null); };
  const set = e => { setForm({ ...form, [e.target.name]: e.target.value }); changed(); };
  const choose = async (e, keep) => {
    changed();
    const f = e.target.files[0];
    if (!f) { keep(null); return; }
    setReading(true);
    try {
      keep({ name: f.name, size: f.size, text: await readText(f) });
    } catch (err) {
      keep(null);
      setError(err);
    } finally {
      setReading(false);
    }
  };

  // body is the request; secret leaves the file's text and the key out of
  // it for Copy as curl.
  const body = (dryRun, secret) => {
    const b = { from: src.from, dry_run: dryRun, on_conflict: form.on_conflict };
    if (src.api) {
      b.url = form.url.trim();
      b.api_key = secret ? '<your ' + src.api + ' API key>' : form.api_key.trim();
    } else {
      b.data = secret ? '<the text of ' + (file ? file.name : 'the file') + '>' : (file ? file.text : '');
      if (src.log && (log || secret)) b.log_data = secret ? '<the text of ' + (log ? log.name : 'the yourls_log CSV') + ', optional>' : log.text;
    }
    return b;
  };

  const send = async dryRun => {
    setError(null);
    // What is missing is said at its field before anything is sent.
    const missing = {};
    if (!src.api && !file) missing.data = 'Choose a file.';
    if (src.api && !form.url.trim()) missing.url = 'Give the address of your ' + src.api + '.';
    if (src.api && !form.api_key.trim()) missing.api_key = 'Give an API key of your ' + src.api + '.';
    if (Object.keys(missing).length) {
      setError(Object.assign(new Error(src.api ? 'Give the address and an API key of your ' + src.api + '.' : 'Choose the file to import.'), { fields: missing }));
      return;
    }
    setBusy(dryRun ? 'dry' : 'import');
    try {
      setReport(await call('POST', '/v1/imports', body(dryRun, false)));
    } catch (err) {
      setReport(null);
      setError(err);
    } finally {
      setBusy('');
    }
  };

  const submit = e => { e.preventDefault(); send(true); };

  return html`<h1>Import</h1>
    <p>Move in from another shortener: its links with their aliases, titles, tags, dates and click totals, and its dated clicks where it keeps them, into this workspace. Try a dry run first: it reads everything and says what an import would do, changing nothing. An import run twice adds nothing the second time.</p>
    <form id="import-form" class="card" onSubmit=${submit} novalidate>
      <div class="field">
        <label for="import-from">Import from</label>
        <select id="import-from" name="from" value=${sourceId} aria-invalid=${fields.from ? 'true' : undefined}
          onChange=${e => { setSourceId(e.target.value); setFile(null); setLog(null); changed(); }}>
          ${SOURCES.map(s => html`<option value=${s.id}>${s.label}</option>`)}
        </select>
        ${fields.from ? html`<small class="field-error">${fields.from}</small>` : null}
      </div>
      ${src.api ? html`<div class="row">
        <${Field} id="url" label=${src.api + ' address'} type="url" value=${form.url} onInput=${set} placeholder=${src.url}
          error=${fields.url} hint=${'The address your ' + src.api + ' answers at, as ' + src.url + '.'} autocomplete="off" />
        <${Field} id="api_key" label=${src.api + ' API key'} type="password" value=${form.api_key} onInput=${set}
          error=${fields.api_key} hint=${src.key} autocomplete="off" />
      </div>` : html`<div class="row">
        <${FileField} id="import-file" label=${src.file} hint=${src.hint} file=${file} error=${fields.data} onChange=${e => choose(e, setFile)} />
        ${src.log ? html`<${FileField} id="import-log" label="yourls_log table (CSV), optional" file=${log} error=${fields.log_data}
          hint="Its click log, for dated clicks (when, referrer, browser, country). Without it, click totals only."
          onChange=${e => choose(e, setLog)} />` : null}
      </div>`}
      <fieldset class="choice" aria-describedby=${fields.on_conflict ? 'on-conflict-error' : undefined}>
        <legend>When an alias is already taken here</legend>
        <label class="check"><input type="radio" name="on_conflict" value="skip" checked=${form.on_conflict === 'skip'} onChange=${set} /> Skip that link (the report lists it)</label>
        <label class="check"><input type="radio" name="on_conflict" value="rename" checked=${form.on_conflict === 'rename'} onChange=${set} /> Import it under a new alias</label>
        ${fields.on_conflict ? html`<small id="on-conflict-error" class="field-error">${fields.on_conflict}</small>` : null}
      </fieldset>
      <${Message} error=${error} />
      <div class="actions">
        <button type="submit" id="dry-run" class=${report && report.dry_run ? 'secondary' : undefined} disabled=${!!busy || reading}>${busy === 'dry' ? 'Reading…' : reading ? 'Reading the file…' : 'Dry run'}</button>
        ${report && report.dry_run ? html`<button type="button" id="import-now" disabled=${!!busy} onClick=${() => send(false)}>${busy === 'import' ? 'Importing…' : 'Import ' + count(report.imported, 'link', 'links')}</button>` : null}
        <${CopyAsCurl} method="POST" path="/v1/imports" body=${body(!(report && report.dry_run), true)} />
      </div>
      ${busy ? html`<p role="status" class="hint">${src.api ? 'Reading ' + src.api + ' page by page; a large instance takes minutes.' : 'Working through the file…'}</p>` : null}
    </form>
    ${report ? html`<${ImportReport} report=${report} />` : null}`;
}

// FileField is a labelled file input that says which file was read.
function FileField({ id, label, hint, file, error, onChange }) {
  const described = error ? id + '-error' : id + '-hint';
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} type="file" accept=".csv,text/csv,text/plain" aria-invalid=${error ? 'true' : undefined} aria-describedby=${described} onChange=${onChange} />
    ${error ? html`<small id=${id + '-error'} class="field-error">${error}</small>`
      : html`<small id=${id + '-hint'} class="hint">${file ? 'Read ' + file.name + ' (' + fmtNumber(file.text.split('\n').filter(l => l.trim()).length) + ' lines). ' : ''}${hint}</small>`}
  </div>`;
}

// ImportReport shows an answer of the route: the counts, then the items
// that were not imported, with their reasons.
function ImportReport({ report }) {
  const items = report.items || [];
  const rest = items.filter(i => i.status !== 'imported');
  const already = report.exists;
  const d = report.dry_run;
  const parts = [
    (d ? 'would import ' : 'imported ') + count(report.imported, 'link', 'links'),
    fmtNumber(report.skipped) + ' skipped',
    fmtNumber(report.failed) + ' failed',
    count(report.clicks, 'click', 'clicks') + (d ? ' would come' : ' came') + ' with them',
  ];
  return html`<section class="card" id="import-result" data-dry-run=${d ? 'true' : 'false'} aria-labelledby="import-report">
    <h2 id="import-report">${d ? 'Dry run: nothing was changed' : 'Import done'}</h2>
    ${report.complete === false ? html`<p class="msg error" role="alert" id="import-stopped">The source stopped before its end: ${report.error || 'no reason given'}.
      ${d ? ' The counts say what was read until then.' : ' What was read until then is imported; run the import again to carry on (nothing is imported twice).'}</p>` : null}
    <p role="status" id="import-summary">${parts.join(', ').replace(/^./, c => c.toUpperCase())}.${already ? ' ' + count(already, 'link was', 'links were') + ' already imported before.' : ''}</p>
    ${!d && report.imported > 0 ? html`<p><a id="import-done-links" href="/app/links">See them on the Links page</a>.</p>` : null}
    ${rest.length > 0 ? html`<div class="table-wrap"><table id="import-items">
      <thead><tr><th scope="col">Where</th><th scope="col">Alias</th><th scope="col">Result</th><th scope="col">Reason</th></tr></thead>
      <tbody>${rest.map((i, n) => html`<tr key=${n} class=${i.status}>
        <td>${i.where}</td><td><code>${i.alias || i.key || ''}</code></td><td class=${'status ' + i.status}>${STATUS[i.status] || i.status}</td><td class="reason">${i.reason || ''}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
    ${report.skipped + report.failed === 0 ? html`<p class="empty">Every link ${d ? 'can be' : 'was'} imported.</p>` : null}
    ${report.items_truncated ? html`<p class="hint">The list shows the first ${count(items.length, 'row', 'rows')}${report.more_items ? ' of ' + fmtNumber(items.length + report.more_items) : ''}: the counts above are whole. The command line (linkbolt import) reports every row.</p>` : null}
  </section>`;
}
