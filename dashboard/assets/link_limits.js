// link_limits.js: the link controls of expiry and limits in the Links
// page's create and edit forms (expires_at, max_clicks, expired_url,
// archived, title, note) and the archived filter of the list. links.js mounts
// LimitsFields in its form, spreads limitsForm / LIMITS_EMPTY into its form
// state and merges limitsBody into the body it sends.
import { html } from './vendor/htm-preact-standalone.js';
import { Field } from './ui.js';

export const LIMITS_EMPTY = { expires_at: '', max_clicks: '', expired_url: '', archived: 'no', title: '', note: '' };

// localInput is an RFC 3339 instant as a datetime-local input's value (the
// browser's time zone, to the minute).
function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = n => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// limitsForm is a link's controls as the form's fields.
export function limitsForm(l) {
  return {
    expires_at: localInput(l.expires_at), max_clicks: l.max_clicks ? String(l.max_clicks) : '',
    expired_url: l.expired_url || '', archived: l.archived ? 'yes' : 'no', title: l.title || '', note: l.note || '',
  };
}

// value is a field of the form as the API takes it; null when empty. A
// max_clicks that is not a number is sent as typed, for the API to refuse.
function value(form, k) {
  const v = String(form[k]).trim();
  if (k === 'archived') return v === 'yes';
  if (v === '') return null;
  if (k === 'expires_at') {
    const d = new Date(v);
    return isNaN(d) ? v : d.toISOString();
  }
  if (k === 'max_clicks') return /^-?\d+$/.test(v) ? Number(v) : v;
  return v;
}

// limitsBody is what a form sends of the controls: on create (no was) the
// fields given; on edit the fields changed from was, an emptied one as
// null (the API clears it).
export function limitsBody(form, was) {
  const body = {};
  for (const k of Object.keys(LIMITS_EMPTY)) {
    if (was) {
      if (String(form[k]).trim() !== String(was[k]).trim()) body[k] = value(form, k);
    } else if (String(form[k]).trim() !== LIMITS_EMPTY[k]) {
      body[k] = value(form, k);
    }
  }
  return body;
}

const err = (f, k) => f[k] || f['/' + k];

// LimitsFields are the controls' fields; p prefixes the ids ("edit_").
export function LimitsFields({ form, setField, f, p, editing }) {
  const open = editing || Object.keys(LIMITS_EMPTY).some(k => err(f, k) || form[k] !== LIMITS_EMPTY[k]);
  return html`<details class="more" id=${p + 'limits'} open=${open || undefined}>
    <summary>Expiry and limits: end date, click limit, title, archive</summary>
    <div class="row">
      <${Field} id=${p + 'title'} label="Title (optional)" maxlength="200" value=${form.title} onInput=${setField} error=${err(f, 'title')}
        hint="Shown on the preview page (short URL + “+”)." />
      <${Field} id=${p + 'expires_at'} label="Expires at (optional)" type="datetime-local" value=${form.expires_at} onInput=${setField} error=${err(f, 'expires_at')}
        hint=${editing ? 'Empty: never expires.' : 'Your time zone; must be in the future.'} />
      <${Field} id=${p + 'max_clicks'} label="Click limit (optional)" type="number" min="1" step="1" value=${form.max_clicks} onInput=${setField} error=${err(f, 'max_clicks')}
        hint="Used up after this many clicks." />
    </div>
    <div class="row">
      <${Field} id=${p + 'expired_url'} label="After expiry, redirect to (optional)" type="url" placeholder="https://example.com/ended" value=${form.expired_url} onInput=${setField} error=${err(f, 'expired_url')}
        hint="Empty: the link answers 410 Gone." />
      <div class="field">
        <label for=${p + 'archived'}>Archived</label>
        <select id=${p + 'archived'} name=${p + 'archived'} value=${form.archived} onChange=${setField}>
          <option value="no">No: listed</option>
          <option value="yes">Yes: hidden from the list, still redirects</option>
        </select>
      </div>
    </div>
  </details>`;
}

// readArchived is the archived filter of the list's view: false, true or all.
export function readArchived(q) {
  const v = q.get('archived');
  return v === 'true' || v === 'all' ? v : 'false';
}

// ArchivedFilter is the list's archived filter, a field of the Filters form.
export function ArchivedFilter({ value: v }) {
  return html`<div class="field"><label for="filter-archived">Archived</label>
    <select id="filter-archived" name="archived" value=${v}>
      <option value="false">Not archived</option>
      <option value="true">Archived only</option>
      <option value="all">All links</option>
    </select></div>`;
}
