// utm_templates.js is the Workspace page's UTM templates: the saved sets of
// UTM values new links take (GET, POST, PATCH, DELETE /v1/utm-templates),
// picked in the link form's "UTM template" menu.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, useList, useAction } from './ui.js';

const UTM = [['utm_source', 'Source', 'newsletter'], ['utm_medium', 'Medium', 'email'], ['utm_campaign', 'Campaign', 'spring-sale']];
const EMPTY = { name: '', utm_source: '', utm_medium: '', utm_campaign: '' };

// bodyOf is what a form sends: every field, trimmed ("" clears a value).
function bodyOf(form) {
  const body = {};
  for (const k of Object.keys(EMPTY)) body[k] = form[k].trim();
  return body;
}

export function UTMTemplates({ canWrite }) {
  const templates = useList('/v1/utm-templates');
  const [editing, setEditing] = useState(null);
  const [saved, setSaved] = useState('');
  const { act, busy, error, notice } = useAction();
  const remove = t => act(async () => {
    setSaved('');
    if (!confirm('Delete the UTM template ' + t.name + '? Links made with it keep their UTM values.')) return '';
    await call('DELETE', '/v1/utm-templates/' + t.id);
    await templates.reload();
    return 'Deleted ' + t.name + '.';
  }, 'delete');
  // Edit starts from the template as the server holds it now.
  const edit = t => act(async () => {
    setSaved('');
    setEditing(await call('GET', '/v1/utm-templates/' + t.id));
    return '';
  }, 'edit');
  const list = templates.list ? templates.list.data : null;
  return html`<section class="card" aria-labelledby="utm-templates-h" id="utm-templates">
    <h2 id="utm-templates-h">UTM templates</h2>
    <p class="hint">Saved sets of UTM values. A new link takes a template's values where it sets none of its own (the link form's <em>UTM template</em> menu, or <code>utm_template_id</code> in the API); later changes of the template leave existing links alone.</p>
    <${Message} error=${templates.error || error} notice=${notice || saved} />
    ${!list && !templates.error ? html`<p role="status">Loading the templates…</p>` : null}
    ${list && list.length === 0 ? html`<p class="empty">No UTM templates yet.</p>` : null}
    ${list && list.length > 0 ? html`<div class="table-wrap"><table id="utm-template-list">
      <thead><tr><th scope="col">Name</th>${UTM.map(([k, l]) => html`<th scope="col">${l}</th>`)}<th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.map(t => html`<tr key=${t.id} data-template=${t.id}>
        <td>${t.name}</td>${UTM.map(([k]) => html`<td>${t[k] || '—'}</td>`)}
        <td class="actions">${canWrite ? html`<button type="button" class="secondary" aria-label=${'Edit ' + t.name} disabled=${!!busy} onClick=${() => edit(t)}>Edit</button>
          <button type="button" class="secondary danger" aria-label=${'Delete ' + t.name} disabled=${!!busy} onClick=${() => remove(t)}>Delete</button>` : null}</td>
      </tr>`)}</tbody></table></div>` : null}
    ${canWrite ? (editing
      ? html`<${TemplateForm} key=${editing.id} template=${editing} onDone=${async said => { await templates.reload(); setEditing(null); setSaved(said || ''); }} />`
      : html`<${TemplateForm} key="new" onDone=${async said => { await templates.reload(); setSaved(said); }} />`)
      : html`<p class="hint">Members with the read role see the templates; read_write members and owners keep them.</p>`}
  </section>`;
}

// TemplateForm adds a template, or edits template.
function TemplateForm({ template, onDone }) {
  const start = template ? { name: template.name, utm_source: template.utm_source || '', utm_medium: template.utm_medium || '', utm_campaign: template.utm_campaign || '' } : EMPTY;
  const [form, setForm] = useState(start);
  const { act, busy, error } = useAction();
  const method = template ? 'PATCH' : 'POST';
  const path = template ? '/v1/utm-templates/' + template.id : '/v1/utm-templates';
  const body = bodyOf(form);
  const set = e => setForm({ ...form, [e.target.name.replace(/^utm-tpl-/, '')]: e.target.value });
  const submit = e => {
    e.preventDefault();
    act(async () => {
      const t = await call(method, path, body);
      if (!template) setForm(EMPTY);
      await onDone((template ? 'Saved ' : 'Added ') + t.name + '.');
      return '';
    }, 'save');
  };
  const fields = (error && error.fields) || {};
  return html`<form id=${template ? 'utm-template-edit' : 'utm-template-form'} onSubmit=${submit} novalidate>
    <h3>${template ? 'Edit ' + template.name : 'Add a template'}</h3>
    <div class="row">
      <${Field} id="utm-tpl-name" label="Name" maxlength="100" required placeholder="Newsletter" value=${form.name} onInput=${set} error=${fields.name} />
      ${UTM.map(([k, l, ph]) => html`<${Field} id=${'utm-tpl-' + k} label=${'UTM ' + l.toLowerCase()} maxlength="200" placeholder=${ph} value=${form[k]} onInput=${set} error=${fields[k]} />`)}
    </div>
    <${Message} error=${Object.keys(fields).length ? null : error} />
    ${Object.keys(fields).length ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
    <div class="actions"><button type="submit" disabled=${!!busy}>${busy ? 'Saving…' : template ? 'Save template' : 'Add template'}</button>
      ${template ? html`<button type="button" class="secondary" onClick=${() => onDone('')}>Cancel</button>` : null}
      <${CopyAsCurl} method=${method} path=${path} body=${body} /></div>
  </form>`;
}
