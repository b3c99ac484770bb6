// workspace.js is the Workspace page: the workspace's name (owners rename
// it), its plan and the rate limit that plan gives (the instance admin
// changes it), all read from the server (GET /v1/workspaces/{id}); the
// person's workspaces with their role in each, to switch between; and
// creating another workspace, which the page then opens.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call, session } from './api.js';
import { Message, Field, CopyAsCurl, fmtDate, fmtNumber, useAction } from './ui.js';
import { UTMTemplates } from './utm_templates.js';
import { Tags } from './tags.js';

const plans = [['free', 'Free'], ['pro', 'Pro'], ['enterprise', 'Enterprise']];
const planName = p => (plans.find(([v]) => v === p) || [p, p])[1];

// limitText says a rate limit in words.
function limitText(limit) {
  if (limit === undefined) return 'Reading the rate limit…';
  if (limit === 0) return 'No rate limit: requests are not counted.';
  return fmtNumber(limit) + ' API requests a minute, shared by every key and member of this workspace.';
}

export function WorkspacePage({ workspace: ws, me, reloadMe, switchTo }) {
  const fresh = useWorkspace(ws);
  const shown = fresh.ws || ws;
  return html`<h1>Workspace</h1>
    ${ws ? html`<${Message} error=${fresh.error} />
      ${!fresh.ws && !fresh.error ? html`<p role="status">Reading the workspace…</p>` : html`<p class="hint">Settings of <strong>${shown.name}</strong>, the workspace chosen in the switcher.
      Your role: ${ws.role ? ws.role.replace('_', ' ') : 'none (instance admin)'}</p>
      <p class="hint" id="ws-dates">Plan ${planName(shown.plan)} · created ${fmtDate(shown.created_at)} · last changed ${fmtDate(shown.updated_at)}</p>
      <${RenameForm} ws=${shown} reloadMe=${reloadMe} />
      <${LinkDefaultsForm} ws=${shown} reloadMe=${reloadMe} />
      <${DestinationChecksForm} ws=${shown} reloadMe=${reloadMe} />
      <${PixelsForm} ws=${shown} reloadMe=${reloadMe} />
      <${PlanSection} ws=${shown} me=${me} reloadMe=${reloadMe} />
      <${UTMTemplates} key=${ws.id} canWrite=${ws.role === 'owner' || ws.role === 'read_write'} />
      <${Tags} key=${'tags-' + ws.id} canWrite=${ws.role === 'owner' || ws.role === 'read_write'} />`}`
    : html`<p class="empty">You are not a member of any workspace yet. Create one below, or ask an owner for an invitation.</p>`}
    <${YourWorkspaces} current=${ws && ws.id} reloadMe=${reloadMe} version=${shown && shown.name + shown.plan} />
    <${CreateForm} me=${me} switchTo=${switchTo} />`;
}

// useWorkspace reads the workspace from the server (GET
// /v1/workspaces/{id}) when the page opens and again after its name or
// plan changed, keeping what it read until the new answer is in.
function useWorkspace(ws) {
  const [state, setState] = useState({ ws: null, error: null });
  useEffect(() => {
    if (!ws) return undefined;
    let live = true;
    call('GET', '/v1/workspaces/' + ws.id).then(w => live && setState({ ws: w, error: null }), e => live && setState(s => ({ ...s, error: e })));
    return () => { live = false; };
  }, [ws && ws.id, ws && ws.name, ws && ws.plan, ws && JSON.stringify(ws.link_defaults), ws && ws.destination_checks, ws && JSON.stringify(ws.pixels)]);
  return state;
}

// YourWorkspaces lists the person's workspaces with their role in each
// (GET /v1/workspaces); Switch opens another one's settings here.
function YourWorkspaces({ current, reloadMe, version }) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState('');
  useEffect(() => {
    let live = true;
    call('GET', '/v1/workspaces').then(l => live && setList(l), e => live && setError(e));
    return () => { live = false; };
  }, [version]);
  const open = async w => {
    setBusy(w.id);
    session.workspace = w.id;
    await reloadMe();
  };
  return html`<section class="card" aria-labelledby="ws-yours">
    <h2 id="ws-yours">Your workspaces</h2>
    <${Message} error=${error} />
    ${!list && !error ? html`<p role="status">Loading your workspaces…</p>` : null}
    ${list && list.data.length === 0 ? html`<p class="empty">You are not a member of any workspace.</p>` : null}
    ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="your-workspaces">
      <thead><tr><th scope="col">Name</th><th scope="col">Your role</th><th scope="col">Plan</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${list.data.map(w => html`<tr key=${w.id} data-workspace=${w.id}>
        <td>${w.name}</td>
        <td class="ws-role">${w.role ? w.role.replace('_', ' ') : '—'}</td>
        <td>${planName(w.plan)}</td>
        <td class="when">${fmtDate(w.created_at)}</td>
        <td class="actions">${w.id === current ? html`<span class="state active">open</span>`
          : html`<button type="button" class="secondary switch" aria-label=${'Switch to ' + w.name} disabled=${!!busy} onClick=${() => open(w)}>${busy === w.id ? 'Switching…' : 'Switch'}</button>`}</td>
      </tr>`)}</tbody>
    </table></div>` : null}
  </section>`;
}

// usePatchWorkspace sends a PATCH of the workspace and reads the person's
// workspaces again; the notice says what the server answered (said(w)).
function usePatchWorkspace(ws, reloadMe, said) {
  const { act, busy, error, notice } = useAction();
  const send = body => act(async () => {
    const w = await call('PATCH', '/v1/workspaces/' + ws.id, body);
    await reloadMe();
    return said(w);
  }, 'patch');
  return { error, notice, busy: !!busy, send };
}

function RenameForm({ ws, reloadMe }) {
  const [name, setName] = useState(ws.name);
  const { error, notice, busy, send } = usePatchWorkspace(ws, reloadMe, w => 'The workspace is now called ' + w.name + '.');
  const body = { name };
  const submit = e => { e.preventDefault(); send(body); };
  const fields = (error && error.fields) || {};
  return html`<section class="card" aria-labelledby="ws-name">
    <h2 id="ws-name">Name</h2>
    <form id="rename-form" onSubmit=${submit} novalidate>
      <${Field} id="ws-name-input" name="name" label="Workspace name" maxlength="100" required value=${name}
        onInput=${e => setName(e.target.value)} error=${fields.name} hint="Owners and the instance admin may rename it." />
      <${Message} error=${fields.name ? null : error} notice=${notice} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Rename'}</button>
      <${CopyAsCurl} method="PATCH" path=${'/v1/workspaces/' + ws.id} body=${body} /></div>
    </form>
  </section>`;
}

// LinkDefaultsForm sets what new links of the workspace take when their
// creation does not say: forwarding of the visitor's path and query.
function LinkDefaultsForm({ ws, reloadMe }) {
  const d = ws.link_defaults || {};
  const [path, setPath] = useState(!!d.forward_path);
  const [query, setQuery] = useState(!!d.forward_query);
  const { error, notice, busy, send } = usePatchWorkspace(ws, reloadMe, () => 'Saved: new links take these defaults; existing links keep theirs.');
  const body = { link_defaults: { forward_path: path, forward_query: query } };
  const submit = e => { e.preventDefault(); send(body); };
  return html`<section class="card" aria-labelledby="ws-link-defaults">
    <h2 id="ws-link-defaults">Defaults of new links</h2>
    <form id="link-defaults-form" onSubmit=${submit} novalidate>
      <div class="field"><label class="check"><input type="checkbox" id="ws-forward-path" checked=${path} onChange=${e => setPath(e.target.checked)} />
        Forward the path: <code>/code/rest/of/path</code> goes to the destination + <code>/rest/of/path</code></label></div>
      <div class="field"><label class="check"><input type="checkbox" id="ws-forward-query" checked=${query} onChange=${e => setQuery(e.target.checked)} />
        Forward the query: the visitor's parameters are added to the destination's (the link's own win)</label></div>
      <p class="hint">Owners and the instance admin set them. A link created without saying takes them when it is created; changing them changes no existing link.</p>
      <${Message} error=${error} notice=${notice} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save defaults'}</button>
      <${CopyAsCurl} method="PATCH" path=${'/v1/workspaces/' + ws.id} body=${body} /></div>
    </form>
  </section>`;
}

// DestinationChecksForm turns the background check of the workspace's
// destinations on or off (destination_checks).
function DestinationChecksForm({ ws, reloadMe }) {
  const [on, setOn] = useState(!!ws.destination_checks);
  const { error, notice, busy, send } = usePatchWorkspace(ws, reloadMe, w => w.destination_checks
    ? 'Checks are on: every link is checked within the next minutes, then once a day.'
    : 'Checks are off: the results are forgotten.');
  const body = { destination_checks: on };
  const submit = e => { e.preventDefault(); send(body); };
  return html`<section class="card" aria-labelledby="ws-checks">
    <h2 id="ws-checks">Broken destinations</h2>
    <form id="destination-checks-form" onSubmit=${submit} novalidate>
      <div class="field"><label class="check"><input type="checkbox" id="ws-destination-checks" checked=${on} onChange=${e => setOn(e.target.checked)} />
        Check the destinations of this workspace's links in the background</label></div>
      <p class="hint">A check asks the destination (HEAD, then GET) about once a day. Two failures in a row (no answer, 404, 500…) mark the link <strong>Broken</strong> in the list and send the <code>link.broken</code> webhook event; <code>link.fixed</code> follows when it answers again. Login walls (401, 403) and rate limits (429) count as working. Owners and the instance admin turn it on; off, results are forgotten.</p>
      <${Message} error=${error} notice=${notice} />
      <div class="actions"><button type="submit" disabled=${busy || on === !!ws.destination_checks}>${busy ? 'Saving…' : 'Save'}</button>
      <${CopyAsCurl} method="PATCH" path=${'/v1/workspaces/' + ws.id} body=${body} /></div>
    </form>
  </section>`;
}

// PIXELS are the retargeting pixels a workspace may set: field, label,
// placeholder.
const PIXELS = [['meta', 'Meta pixel ID', '1234567890123456'], ['google', 'Google tag ID', 'G-XXXXXXXXXX or AW-123456789'], ['linkedin', 'LinkedIn partner ID', '1234567']];

// PixelsForm sets the workspace's retargeting pixels, which its links with
// retargeting fire on a page before their redirect.
function PixelsForm({ ws, reloadMe }) {
  const px = ws.pixels || {};
  const [ids, setIDs] = useState({ meta: px.meta || '', google: px.google || '', linkedin: px.linkedin || '' });
  const { error, notice, busy, send } = usePatchWorkspace(ws, reloadMe, w => {
    setIDs({ meta: w.pixels.meta, google: w.pixels.google, linkedin: w.pixels.linkedin });
    return 'Saved: links with retargeting fire ' + (PIXELS.filter(([k]) => w.pixels[k]).map(([, l]) => l.replace(/ (pixel|tag|partner) ID$/, '')).join(', ') || 'no pixel, and redirect as others do') + '.';
  });
  const body = { pixels: { meta: ids.meta.trim(), google: ids.google.trim(), linkedin: ids.linkedin.trim() } };
  const submit = e => { e.preventDefault(); send(body); };
  const fields = (error && error.fields) || {};
  return html`<section class="card" aria-labelledby="ws-pixels">
    <h2 id="ws-pixels">Retargeting pixels</h2>
    <form id="pixels-form" onSubmit=${submit} novalidate>
      <div class="row">
        ${PIXELS.map(([k, label, ph]) => html`<${Field} id=${'ws-pixel-' + k} name=${k} label=${label} placeholder=${ph} maxlength="30" value=${ids[k]}
          onInput=${e => setIDs({ ...ids, [k]: e.target.value })} error=${fields['pixels.' + k]} />`)}
      </div>
      <p class="hint">Links with <em>Fire retargeting pixels</em> checked show visitors a short page that loads these networks' scripts, then redirects (under a second). Visitors pay one more page, and their visit is shared with these networks: asking the consent their law requires is the workspace's job. Empty: not used. Owners and the instance admin set them.</p>
      <${Message} error=${Object.keys(fields).length ? null : error} notice=${notice} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save pixels'}</button>
      <${CopyAsCurl} method="PATCH" path=${'/v1/workspaces/' + ws.id} body=${body} /></div>
    </form>
  </section>`;
}

function PlanSection({ ws, me, reloadMe }) {
  const [plan, setPlan] = useState(ws.plan);
  const { error, notice, busy, send } = usePatchWorkspace(ws, reloadMe, w => 'The plan is now ' + planName(w.plan) + '. It applies from the next request.');
  const body = { plan };
  const submit = e => { e.preventDefault(); send(body); };
  return html`<section class="card" aria-labelledby="ws-plan">
    <h2 id="ws-plan">Plan</h2>
    <p id="plan-now"><strong>${planName(ws.plan)}</strong>: <span id="plan-limit">${limitText(ws.rate_limit)}</span></p>
    ${me.admin ? html`<form id="plan-form" class="inline" onSubmit=${submit}>
        <label for="plan-select">Change the plan to</label>
        <select id="plan-select" name="plan" value=${plan} onChange=${e => setPlan(e.target.value)}>
          ${plans.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select>
        <button type="submit" disabled=${busy || plan === ws.plan}>${busy ? 'Changing…' : 'Change plan'}</button>
        <${CopyAsCurl} method="PATCH" path=${'/v1/workspaces/' + ws.id} body=${body} />
      </form>
      <${Message} error=${error} notice=${notice} />
      <p class="hint">As the instance admin you set every workspace's plan; the limits of each plan are in the configuration (<code>plans.free</code>, <code>plans.pro</code>, <code>plans.enterprise</code>).</p>`
    : html`<p class="hint" id="plan-who">Only the instance admin can change the plan. Ask them if this workspace needs a higher limit.</p>`}
  </section>`;
}

function CreateForm({ me, switchTo }) {
  const [form, setForm] = useState({ name: '', plan: '' });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const body = { name: form.name };
  if (me.admin && form.plan) body.plan = form.plan;
  const set = e => setForm({ ...form, [e.target.name]: e.target.value });
  const submit = async e => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const w = await call('POST', '/v1/workspaces', body);
      await switchTo(w.id);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  const fields = (error && error.fields) || {};
  return html`<section class="card" aria-labelledby="ws-create">
    <h2 id="ws-create">Create a workspace</h2>
    <p class="hint">A workspace has its own links, keys, members and plan. You become its owner, and the dashboard opens it.</p>
    <form id="create-workspace-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="new-ws-name" name="name" label="Name" maxlength="100" required placeholder="Marketing" value=${form.name} onInput=${set} error=${fields.name} />
        ${me.admin ? html`<div class="field"><label for="new-ws-plan">Plan</label>
          <select id="new-ws-plan" name="plan" value=${form.plan} onChange=${set}>
            <option value="">The default plan</option>
            ${plans.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
          </select>${fields.plan ? html`<small class="field-error">${fields.plan}</small>` : null}</div>` : null}
      </div>
      <${Message} error=${fields.name || fields.plan ? null : error} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create workspace'}</button>
      <${CopyAsCurl} method="POST" path="/v1/workspaces" body=${body} /></div>
    </form>
  </section>`;
}
