// admin_blocklist.js: the Admin page's section of the destination
// blocklist (link controls): the entries in force, from the file
// (links.blocklist_path) and added here, a form to add one and a button to
// remove one added here.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, fmtDate, useAction, useList } from './ui.js';

export function Blocklist() {
  const { list, error, setError, reload } = useList('/v1/admin/blocklist');
  const [entry, setEntry] = useState('');
  const { act, notice, setNotice } = useAction({ reload, setError });
  const [busy, setBusy] = useState(false);
  const [fieldError, setFieldError] = useState('');

  const add = async e => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setNotice('');
    setFieldError('');
    try {
      const added = await call('POST', '/v1/admin/blocklist', { entry });
      setEntry('');
      await reload();
      setNotice('Blocked ' + added.entry + ': new links to it are refused, and existing ones answer 410.');
    } catch (err) {
      if (err.fields && err.fields.entry) setFieldError(err.fields.entry);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };
  const remove = e => act(async () => {
    await call('DELETE', '/v1/admin/blocklist?entry=' + encodeURIComponent(e.entry));
    return 'Removed ' + e.entry + '.';
  });
  return html`<section aria-labelledby="blocklist-title" class="card">
    <h2 id="blocklist-title">Destination blocklist</h2>
    <p class="hint">A host blocks itself and its subdomains; an entry with “/” or “*” is a pattern over host/path?query.
      ${list && list.meta.path ? html` The file ${list.meta.path} is read again within seconds of a change.` : ' No blocklist file is configured (links.blocklist_path).'}</p>
    <form id="blocklist-form" onSubmit=${add} novalidate>
      <div class="row">
        <${Field} id="blocklist-entry" name="entry" label="Host or pattern" required placeholder="phish.example or example.com/promo/*" value=${entry}
          onInput=${e => setEntry(e.target.value)} error=${fieldError || undefined} />
      </div>
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Adding…' : 'Add to blocklist'}</button>
      <${CopyAsCurl} method="POST" path="/v1/admin/blocklist" body=${{ entry }} /></div>
    </form>
    <${Message} error=${error} notice=${notice} />
    ${list && list.data.length === 0 ? html`<p class="empty">Nothing is blocked.</p>` : null}
    ${list && list.data.length > 0 ? html`<table id="blocklist">
      <thead><tr><th scope="col">Entry</th><th scope="col">Kind</th><th scope="col">Source</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.data.map(e => html`<tr key=${e.source + e.entry}>
        <td class="code" data-label="Entry">${e.entry}</td>
        <td data-label="Kind">${e.kind}</td>
        <td data-label="Source">${e.source === 'file' ? 'file' : 'added here'}</td>
        <td data-label="Added">${e.created_at ? fmtDate(e.created_at) : '—'}</td>
        <td data-label="Actions">${e.source === 'api' ? html`<${Confirm} label="Remove" question=${'Remove ' + e.entry + '?'} onConfirm=${() => remove(e)} />` : null}</td>
      </tr>`)}</tbody>
    </table>` : null}
  </section>`;
}
