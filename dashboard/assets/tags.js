// tags.js is the Workspace page's Tags section: the workspace's tags (GET
// /v1/tags, those its links carry and those with a colour or a
// description), each tag's colour and description set by PUT
// /v1/tags/{name} and cleared by DELETE; and TagChip, the coloured chip
// the Links page shows a link's tags with.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyAsCurl, fmtNumber, useList, useAction } from './ui.js';

// COLORS are the colours a tag may take (the API's list, in its order).
export const COLORS = ['red', 'yellow', 'green', 'blue', 'purple', 'pink', 'brown', 'gray'];

const tagPath = name => '/v1/tags/' + encodeURIComponent(name);

// useTagInfo reads the workspace's tags once, for chips: a map from a
// tag's name to {color, description}; empty while it reads or when it
// cannot (the chips are then plain).
export function useTagInfo(version) {
  const [info, setInfo] = useState(new Map());
  useEffect(() => {
    let live = true;
    call('GET', '/v1/tags').then(l => live && setInfo(new Map(l.data.map(t => [t.name, t]))), () => {});
    return () => { live = false; };
  }, [version]);
  return info;
}

// chipProps are the class and title of a tag's chip.
export function chipProps(name, info) {
  const t = info && info.get(name);
  return {
    class: 'tag' + (t && t.color ? ' tag-' + t.color : ''),
    title: t && t.description ? name + ': ' + t.description : undefined,
  };
}

export function Tags({ canWrite }) {
  const tags = useList('/v1/tags');
  const [editing, setEditing] = useState(null);
  const [saved, setSaved] = useState('');
  const { act, busy, error, notice } = useAction();
  const clear = t => act(async () => {
    setSaved('');
    if (!confirm('Clear the colour and description of ' + t.name + '? Its links keep the tag.')) return '';
    await call('DELETE', tagPath(t.name));
    await tags.reload();
    return 'Cleared ' + t.name + '.';
  }, 'clear');
  // Edit starts from the tag as the server holds it now.
  const edit = t => act(async () => {
    setSaved('');
    setEditing(await call('GET', tagPath(t.name)));
    return '';
  }, 'edit');
  const list = tags.list ? tags.list.data : null;
  return html`<section class="card" aria-labelledby="tags-h" id="tags">
    <h2 id="tags-h">Tags</h2>
    <p class="hint">The tags of this workspace's links. A colour and a description make a tag's chip stand out in the list of links (the description shows when you point at it); a tag need not be on a link yet to take them.</p>
    <${Message} error=${tags.error || error} notice=${notice || saved} />
    ${!list && !tags.error ? html`<p role="status">Loading the tags…</p>` : null}
    ${list && list.length === 0 ? html`<p class="empty">No tags yet: give a link tags, or add one below.</p>` : null}
    ${list && list.length > 0 ? html`<div class="table-wrap"><table id="tag-list">
      <thead><tr><th scope="col">Tag</th><th scope="col">Description</th><th scope="col" class="num">Links</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.map(t => html`<tr key=${t.name} data-tag=${t.name}>
        <td data-label="Tag"><a ...${chipProps(t.name, new Map([[t.name, t]]))} href=${'/app/links?tag=' + encodeURIComponent(t.name)}>${t.name}</a></td>
        <td data-label="Description">${t.description || '—'}</td>
        <td class="num" data-label="Links">${fmtNumber(t.links)}</td>
        <td class="actions">${canWrite ? html`<button type="button" class="secondary" aria-label=${'Edit ' + t.name} disabled=${!!busy} onClick=${() => edit(t)}>Edit</button>
          ${t.updated_at ? html`<button type="button" class="secondary danger" aria-label=${'Clear ' + t.name} disabled=${!!busy} onClick=${() => clear(t)}>Clear</button>` : null}` : null}</td>
      </tr>`)}</tbody></table></div>` : null}
    ${canWrite ? (editing
      ? html`<${TagForm} key=${'edit-' + editing.name} tag=${editing} onDone=${async said => { await tags.reload(); setEditing(null); setSaved(said || ''); }} />`
      : html`<${TagForm} key="new" known=${list || []} onDone=${async said => { await tags.reload(); setSaved(said); }} />`)
      : html`<p class="hint">Members with the read role see the tags; read_write members and owners colour and describe them.</p>`}
  </section>`;
}

// TagForm colours and describes a tag: tag, when editing one, or any
// name typed (a tag of a link, or a new one).
function TagForm({ tag, known, onDone }) {
  const [form, setForm] = useState({ name: tag ? tag.name : '', color: tag && tag.color || '', description: tag && tag.description || '' });
  const { act, busy, error } = useAction();
  const name = tag ? tag.name : form.name.trim();
  const body = { color: form.color || null, description: form.description.trim() || null };
  const set = e => setForm({ ...form, [e.target.name.replace(/^tag-/, '')]: e.target.value });
  const submit = e => {
    e.preventDefault();
    act(async () => {
      if (!name) throw Object.assign(new Error('Name the tag.'), { fields: { name: 'Name the tag.' } });
      const t = await call('PUT', tagPath(name), body);
      if (!tag) setForm({ name: '', color: '', description: '' });
      await onDone('Saved ' + t.name + '.');
      return '';
    }, 'save');
  };
  const fields = (error && error.fields) || {};
  return html`<form id=${tag ? 'tag-edit' : 'tag-form'} onSubmit=${submit} novalidate>
    <h3>${tag ? 'Edit ' + tag.name : 'Colour a tag'}</h3>
    <div class="row">
      ${tag ? null : html`<${Field} id="tag-name" label="Tag" maxlength="50" required placeholder="spring" list="tag-names" value=${form.name} onInput=${set} error=${fields.name} />
        <datalist id="tag-names">${known.map(t => html`<option value=${t.name} />`)}</datalist>`}
      <div class="field">
        <label for="tag-color">Colour</label>
        <select id="tag-color" name="tag-color" value=${form.color} onChange=${set} aria-invalid=${fields.color ? 'true' : undefined}>
          <option value="">None</option>
          ${COLORS.map(c => html`<option value=${c}>${c[0].toUpperCase() + c.slice(1)}</option>`)}
        </select>
        ${fields.color ? html`<small class="field-error">${fields.color}</small>` : null}
      </div>
      <${Field} id="tag-description" label="Description (optional)" maxlength="500" placeholder="Links of the spring campaign" value=${form.description} onInput=${set} error=${fields.description} />
    </div>
    <p class="hint">Preview: <span ...${chipProps(name || 'tag', new Map([[name || 'tag', { color: form.color, description: form.description }]]))}>${name || 'tag'}</span></p>
    <${Message} error=${Object.keys(fields).length ? null : error} />
    ${Object.keys(fields).length ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
    <div class="actions"><button type="submit" disabled=${!!busy}>${busy ? 'Saving…' : 'Save tag'}</button>
      ${tag ? html`<button type="button" class="secondary" onClick=${() => onDone('')}>Cancel</button>` : null}
      <${CopyAsCurl} method="PUT" path=${tagPath(name || 'tag')} body=${body} /></div>
  </form>`;
}
