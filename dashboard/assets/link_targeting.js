// link_targeting.js is the part of the link form for the link controls:
// password, rules, variants, social card. links.js mounts it with
// TargetingFields inside its form, spreads TARGETING_EMPTY and
// targetingFormOf(link) into the form's fields and adds targetingBody(form,
// was) to the request body.
//
// A rule is edited as its conditions, "country=DE, device=mobile"
// (query.<name>=<value> for a query parameter, ip=<addresses or ranges,
// space-separated>, after=/before=<RFC 3339 instant>), and where it goes.
// Every condition of a rule must hold.
import { html, useEffect, useState } from './vendor/htm-preact-standalone.js';
import { Field } from './ui.js';

const CONDS = ['device', 'os', 'browser', 'country', 'language'];

export const TARGETING_EMPTY = { password: '', ios_url: '', android_url: '', rules: [], variants: [], og_title: '', og_description: '', og_image_url: '' };

// condText writes a rule's conditions as the form shows them.
function condText(c) {
  const parts = CONDS.filter(k => c[k]).map(k => k + '=' + c[k]);
  if (c.query) parts.push('query.' + c.query.name + '=' + c.query.value);
  if (c.ip && c.ip.length) parts.push('ip=' + c.ip.join(' '));
  if (c.after) parts.push('after=' + c.after);
  if (c.before) parts.push('before=' + c.before);
  return parts.join(', ');
}

// parseConds reads the conditions of a rule row; a part that is not
// name=value is sent as it is, for the API to refuse at the field.
function parseConds(text) {
  const c = {};
  for (const part of text.split(',').map(s => s.trim()).filter(Boolean)) {
    const i = part.indexOf('=');
    const k = i < 0 ? part : part.slice(0, i).trim().toLowerCase();
    const v = i < 0 ? '' : part.slice(i + 1).trim();
    if (k.startsWith('query.')) c.query = { name: part.slice(6, i).trim(), value: v };
    else if (k === 'ip') c.ip = v.split(/\s+/).filter(Boolean);
    else c[k] = v;
  }
  return c;
}

// targetingFormOf is a link's controls as the form's fields.
export function targetingFormOf(l) {
  const og = l.og || {};
  return {
    password: '', has_password: !!l.has_password, ios_url: l.ios_url || '', android_url: l.android_url || '',
    rules: (l.rules || []).map(r => ({ if: condText(r.if), then: r.then })),
    variants: (l.variants || []).map(v => ({ url: v.destination_url, weight: String(v.weight) })),
    og_title: og.title || '', og_description: og.description || '', og_image_url: og.image_url || '',
  };
}

function rulesOf(form) {
  return form.rules.map(r => ({ if: parseConds(r.if), then: r.then.trim() }));
}

function variantsOf(form) {
  return form.variants.map(v => ({ destination_url: v.url.trim(), weight: Number(v.weight) }));
}

function ogOf(form) {
  return { title: form.og_title.trim(), description: form.og_description.trim(), image_url: form.og_image_url.trim() };
}

// targetingBody is what the controls add to a request: for a create (was
// null) the controls given, for an edit only those changed from was, the
// link's form as the server last answered it.
export function targetingBody(form, was) {
  const body = {};
  const og = ogOf(form);
  if (!was) {
    if (form.password) body.password = form.password;
    for (const k of ['ios_url', 'android_url']) if (form[k].trim()) body[k] = form[k].trim();
    if (form.rules.length) body.rules = rulesOf(form);
    if (form.variants.length) body.variants = variantsOf(form);
    if (og.title || og.description || og.image_url) body.og = og;
    return body;
  }
  if (form.password) body.password = form.password;
  if (form.remove_password) body.password = '';
  for (const k of ['ios_url', 'android_url']) if (form[k].trim() !== was[k]) body[k] = form[k].trim();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(rulesOf(form), rulesOf(was))) body.rules = rulesOf(form);
  if (!same(variantsOf(form), variantsOf(was))) body.variants = variantsOf(form);
  if (!same(og, ogOf(was))) body.og = og;
  return body;
}

// fieldErrors gathers the API's field errors under a prefix.
function fieldErrors(f, prefix) {
  const all = Object.keys(f).filter(k => k === prefix || k.startsWith(prefix + '[') || k.startsWith(prefix + '.')).map(k => f[k]);
  return all.length ? all.join(' ') : undefined;
}

// TargetingFields are the controls' fields; p prefixes every id ("" or
// "edit_"), and setField takes the events of links.js's form.
export function TargetingFields({ form, setField, f, p, editing }) {
  const setList = (name, list) => setField({ target: { name: p + name, value: list } });
  const setRow = (name, i, key, value) => setList(name, form[name].map((r, j) => (j === i ? { ...r, [key]: value } : r)));
  // Open when the link has controls (editing) or the API refused one;
  // then only the person opens and closes it: emptying the last field
  // does not fold it away under their cursor.
  const refused = Object.keys(f).some(k => /^(password|ios_url|android_url|rules|variants|og)/.test(k));
  const [open, setOpen] = useState(() => !!(editing ? (form.has_password || form.ios_url || form.android_url || form.rules.length || form.variants.length || form.og_title || form.og_description || form.og_image_url)
    : (form.password || form.ios_url || form.android_url || form.rules.length || form.variants.length || form.og_title)));
  useEffect(() => { if (refused) setOpen(true); }, [refused]);
  return html`<details class="more targeting" open=${open} onToggle=${e => setOpen(e.currentTarget.open)}>
    <summary>Targeting: password, app stores, rules, A/B split, social card</summary>
    <div class="row">
      <${Field} id=${p + 'password'} label=${editing && form.has_password ? 'New password (protected now)' : 'Password (optional)'} type="password" autocomplete="new-password"
        maxlength="72" value=${form.password} onInput=${setField} error=${fieldErrors(f, 'password')}
        hint="Visitors must enter it; API clients send it in X-Link-Password." />
      ${editing && form.has_password ? html`<div class="field"><label><input type="checkbox" id=${p + 'remove_password'} checked=${!!form.remove_password}
        onChange=${e => setField({ target: { name: p + 'remove_password', value: e.target.checked } })} /> Remove the password</label></div>` : null}
    </div>
    <div class="row">
      <${Field} id=${p + 'ios_url'} label="On iPhone and iPad, go to" type="url" placeholder="https://apps.apple.com/app/id123456789" value=${form.ios_url} onInput=${setField} error=${fieldErrors(f, 'ios_url')}
        hint=${'Before the rules; empty: as everyone.' + (editing ? ' Emptied, it is removed.' : '')} />
      <${Field} id=${p + 'android_url'} label="On Android, go to" type="url" placeholder="https://play.google.com/store/apps/details?id=com.example.app" value=${form.android_url} onInput=${setField} error=${fieldErrors(f, 'android_url')}
        hint="Before the rules; empty: as everyone." />
    </div>
    <fieldset id=${p + 'rules'}>
      <legend>Rules (first match wins, before the A/B split)</legend>
      ${form.rules.length ? html`<p class="hint" id=${p + 'rules-hint'}>Conditions, comma-separated; all of a rule's must hold: <code>device=mobile</code> (desktop, tablet), <code>os=iOS</code>, <code>browser=Safari</code>, <code>country=DE</code>, <code>language=de</code>, <code>query.src=qr</code>, <code>ip=198.51.100.0/24 2001:db8::/32</code> (addresses or CIDR ranges, space-separated), <code>after=2026-11-27T00:00:00Z</code>, <code>before=…</code> (RFC 3339 instants).</p>` : null}
      ${fieldErrors(f, 'rules') ? html`<small class="field-error">${fieldErrors(f, 'rules')}</small>` : null}
      ${form.rules.map((r, i) => html`<div class="row rule">
        <${Field} id=${p + 'rule_' + i + '_if'} label=${'Rule ' + (i + 1) + ': if'} placeholder="country=DE, device=mobile, ip=198.51.100.0/24, after=2026-11-27T00:00:00Z" value=${r.if}
          onInput=${e => setRow('rules', i, 'if', e.target.value)} error=${fieldErrors(f, 'rules[' + i + '].if')} />
        <${Field} id=${p + 'rule_' + i + '_then'} label="then go to" type="url" placeholder="https://example.com/de" value=${r.then}
          onInput=${e => setRow('rules', i, 'then', e.target.value)} error=${fieldErrors(f, 'rules[' + i + '].then')} />
        <button type="button" class="secondary" aria-label=${'Remove rule ' + (i + 1)} onClick=${() => setList('rules', form.rules.filter((_, j) => j !== i))}>Remove</button>
      </div>`)}
      ${form.rules.length < 20 ? html`<button type="button" class="secondary" id=${p + 'add_rule'} onClick=${() => setList('rules', [...form.rules, { if: '', then: '' }])}>Add rule</button>` : null}
    </fieldset>
    <fieldset id=${p + 'variants'}>
      <legend>A/B split (weights sum to 100)</legend>
      ${fieldErrors(f, 'variants') ? html`<small class="field-error">${fieldErrors(f, 'variants')}</small>` : null}
      ${form.variants.map((v, i) => html`<div class="row variant">
        <${Field} id=${p + 'variant_' + i + '_url'} label=${'Variant ' + (i + 1)} type="url" placeholder="https://example.com/b" value=${v.url}
          onInput=${e => setRow('variants', i, 'url', e.target.value)} />
        <${Field} id=${p + 'variant_' + i + '_weight'} label="Weight %" type="number" min="1" max="100" value=${v.weight}
          onInput=${e => setRow('variants', i, 'weight', e.target.value)} />
        <button type="button" class="secondary" aria-label=${'Remove variant ' + (i + 1)} onClick=${() => setList('variants', form.variants.filter((_, j) => j !== i))}>Remove</button>
      </div>`)}
      <button type="button" class="secondary" id=${p + 'add_variant'} onClick=${() => setList('variants', [...form.variants, { url: '', weight: '50' }])}>Add variant</button>
    </fieldset>
    <div class="row">
      <${Field} id=${p + 'og_title'} label="Social card title" maxlength="200" value=${form.og_title} onInput=${setField} error=${fieldErrors(f, 'og.title')} />
      <${Field} id=${p + 'og_description'} label="Social card description" maxlength="500" value=${form.og_description} onInput=${setField} error=${fieldErrors(f, 'og.description')} />
      <${Field} id=${p + 'og_image_url'} label="Social card image URL" type="url" value=${form.og_image_url} onInput=${setField} error=${fieldErrors(f, 'og.image_url')} />
    </div>
  </details>`;
}
