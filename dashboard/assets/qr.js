// qr.js is the QR code of a link, in a dialog opened from its row on the
// Links page: a preview that follows the options, PNG and SVG downloads,
// and the link's saved designs (apply, save, delete).
import { html, useState, useEffect, useRef } from './vendor/htm-preact-standalone.js';
import { call, fetchFile, saveFile, upload } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, useAction, useApiForm, useList } from './ui.js';

// DEFAULTS are the API's defaults; the form keeps every value as the
// string its control holds.
const DEFAULTS = { format: 'png', size: '512', margin: '4', level: 'M', fg: '#000000', bg: '#ffffff' };
const LEVELS = [['L', 'L: 7% can be damaged'], ['M', 'M: 15% (default)'], ['Q', 'Q: 25%'], ['H', 'H: 30%']];

// imageQuery is the query of an image request: only the options that
// differ from the defaults, so the request (and its curl) stays short.
function imageQuery(o, format) {
  const q = new URLSearchParams();
  if (format !== 'png') q.set('format', format);
  for (const k of ['size', 'margin', 'level', 'fg', 'bg']) {
    if (String(o[k]).toLowerCase() !== DEFAULTS[k]) q.set(k, o[k]);
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

// optionsBody is the options as a design stores them, numbers as numbers.
function optionsBody(o) {
  const num = v => (/^\s*\d+\s*$/.test(v) ? Number(v) : v);
  return { format: o.format, size: num(o.size), margin: num(o.margin), level: o.level, fg: o.fg, bg: o.bg };
}

// fromDesign is a design's options as the form holds them; a colour
// input takes #rrggbb only, so #rgb is spelled out.
function fromDesign(d) {
  const o = d.options;
  const hex = c => (/^#[0-9a-f]{3}$/i.test(c) ? '#' + [...c.slice(1)].map(x => x + x).join('') : c).toLowerCase();
  return { format: o.format, size: String(o.size), margin: String(o.margin), level: o.level, fg: hex(o.fg), bg: hex(o.bg) };
}

// fetchImage reads an image with the session's token (an <img> could not
// send it) and returns it as a blob; a refusal is an ApiError.
async function fetchImage(path) {
  return (await fetchFile(path)).blob();
}

function fmtBytes(n) {
  return n < 1024 ? n + ' bytes' : (n / 1024).toLocaleString(undefined, { maximumFractionDigits: 1 }) + ' KB';
}

// QRButton is the "QR" button of a row of the Links page, with its dialog.
export function QRButton({ link }) {
  const [open, setOpen] = useState(false);
  return html`<button type="button" class="secondary qr-open" aria-haspopup="dialog" aria-label=${'QR code of ' + link.alias} onClick=${() => setOpen(true)}>QR</button>${open ? html`<${QRDialog} link=${link} onClose=${() => setOpen(false)} />` : null}`;
}

// QRDialog is a modal dialog for one link's QR code. Escape or Close ends
// it, and the focus goes back to where it was (the row's QR button).
export function QRDialog({ link, onClose }) {
  const ref = useRef(null);
  const [opts, setOpts] = useState(DEFAULTS);
  const [applied, setApplied] = useState('');
  // shown is the applied design when it has a logo: the preview and the
  // downloads are then its own image, which the link's has no logo for.
  const [shown, setShown] = useState(null);

  useEffect(() => {
    const opener = document.activeElement;
    const d = ref.current;
    const closed = () => onClose();
    d.addEventListener('close', closed);
    d.showModal();
    return () => {
      d.removeEventListener('close', closed);
      if (d.open) d.close();
      if (opener && opener.isConnected) opener.focus();
    };
  }, []);

  const base = '/v1/links/' + encodeURIComponent(link.id) + '/qr';
  const setOpt = (k, v) => { setOpts(o => ({ ...o, [k]: v })); setApplied(''); setShown(null); };
  const apply = d => { setOpts(fromDesign(d)); setApplied(d.id); setShown(d.logo ? d : null); };
  return html`<dialog ref=${ref} class="qr-dialog" aria-labelledby="qr-title">
    <header class="qr-head">
      <h2 id="qr-title">QR code of ${link.short_url.replace(/^https?:\/\//, '')}</h2>
      <button type="button" class="secondary" id="qr-close" onClick=${() => ref.current.close()}>Close</button>
    </header>
    <div class="qr-body">
      <${Preview} base=${base} opts=${opts} design=${shown} setOpt=${setOpt} reset=${() => { setOpts(DEFAULTS); setApplied(''); setShown(null); }} alias=${link.alias} />
      <${Designs} link=${link} opts=${opts} applied=${applied} apply=${apply} unapply=${() => { setApplied(''); setShown(null); }} />
    </div>
  </dialog>`;
}

// Preview shows the image for the options, the controls that change them
// and the downloads; with design (an applied design with a logo, whose
// options are those shown), the design's own image, logo and all.
function Preview({ base, opts, design, setOpt, reset, alias }) {
  const imagePath = format => design
    ? '/v1/qr-codes/' + encodeURIComponent(design.id) + '/image' + (format !== design.options.format ? '?format=' + format : '')
    : base + imageQuery(opts, format);
  const path = imagePath(opts.format);
  // Another logo is another image at the same path.
  const key = path + (design ? '#' + design.logo.digest : '');
  const [img, setImg] = useState({ url: '', bytes: 0, type: '', error: null, loading: true });
  const [dims, setDims] = useState(null);
  const dl = useAction();

  useEffect(() => {
    let live = true;
    setImg(i => ({ ...i, loading: true }));
    fetchImage(path).then(blob => {
      if (live) setImg({ url: URL.createObjectURL(blob), bytes: blob.size, type: blob.type, error: null, loading: false });
    }, e => live && setImg({ url: '', bytes: 0, type: '', error: e, loading: false }));
    return () => { live = false; };
  }, [key]);
  // A blob URL is given back once the image after it is on screen, or
  // when the dialog closes.
  useEffect(() => () => { if (img.url) URL.revokeObjectURL(img.url); }, [img.url]);

  const download = format => dl.act(async () => {
    const name = alias + '-qr.' + format;
    saveFile(await fetchImage(imagePath(format)), name);
    return 'Saved ' + name + '.';
  }, format);

  const f = (img.error && img.error.fields) || {};
  const change = k => e => setOpt(k, e.target.value);
  return html`<div class="qr-main">
    <figure class="qr-preview" aria-busy=${img.loading ? 'true' : 'false'}>
      ${img.url ? html`<img id="qr-preview" src=${img.url} alt=${'QR code of ' + alias + ' as shown by the options'} data-bytes=${img.bytes}
        onLoad=${e => setDims([e.target.naturalWidth, e.target.naturalHeight])} />` : null}
      ${!img.url && img.loading ? html`<p role="status" class="qr-placeholder">Drawing the QR code…</p>` : null}
      ${!img.url && img.error ? html`<p class="qr-placeholder empty">No preview for these options.</p>` : null}
      <figcaption id="qr-facts" role="status">${img.loading ? 'Drawing…' : img.url ? (dims ? dims[0] + ' × ' + dims[1] + ' px · ' : '') + (img.type.includes('svg') ? 'SVG' : 'PNG') + ' · ' + fmtBytes(img.bytes) + (design ? ' · with the logo of “' + design.name + '”' : '') : ''}</figcaption>
    </figure>
    <div class="qr-options">
      <form id="qr-options" novalidate onSubmit=${e => e.preventDefault()}>
        <div class="row">
          <div class="field"><label for="qr-format">Format</label>
            <select id="qr-format" value=${opts.format} onChange=${change('format')}>
              <option value="png">PNG (image)</option><option value="svg">SVG (vector)</option>
            </select></div>
          <div class="field"><label for="qr-level">Error correction</label>
            <select id="qr-level" value=${opts.level} onChange=${change('level')} aria-invalid=${f.level ? 'true' : undefined} aria-describedby=${design ? 'qr-level-hint' : undefined}>
              ${LEVELS.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
            </select>${f.level ? html`<small class="field-error">${f.level}</small>` : null}
            ${design ? html`<small id="qr-level-hint" class="hint">Drawn at H while the design has a logo.</small>` : null}</div>
        </div>
        <div class="row">
          <${Field} id="qr-size" label="Size (px)" type="number" min="64" max="2048" step="1" inputmode="numeric" value=${opts.size} onChange=${change('size')} error=${f.size} hint="64 to 2048" />
          <${Field} id="qr-margin" label="Margin (modules)" type="number" min="0" max="16" step="1" inputmode="numeric" value=${opts.margin} onChange=${change('margin')} error=${f.margin} hint="0 to 16" />
        </div>
        <div class="row">
          <${Field} id="qr-fg" label="Foreground" type="color" class="qr-colour" value=${opts.fg} onChange=${change('fg')} error=${f.fg} hint=${opts.fg} />
          <${Field} id="qr-bg" label="Background" type="color" class="qr-colour" value=${opts.bg} onChange=${change('bg')} error=${f.bg} hint=${opts.bg} />
        </div>
        ${img.error ? html`<${Message} error=${img.error} />` : null}
        <div class="actions">
          <button type="button" class="secondary" id="qr-reset" onClick=${reset}>Reset to defaults</button>
        </div>
      </form>
      <div class="actions qr-downloads">
        <button type="button" id="qr-download-png" disabled=${!!dl.busy} onClick=${() => download('png')}>${dl.busy === 'png' ? 'Downloading…' : 'Download PNG'}</button>
        <button type="button" id="qr-download-svg" disabled=${!!dl.busy} onClick=${() => download('svg')}>${dl.busy === 'svg' ? 'Downloading…' : 'Download SVG'}</button>
        <${CopyAsCurl} method="GET" path=${path} />
      </div>
      <${Message} error=${dl.error} notice=${dl.notice} />
    </div>
  </div>`;
}

// Thumb is a saved design's own image (GET /v1/qr-codes/{id}/image), with
// its logo if it has one, read with the token into a blob URL that is
// given back when the design changes or the dialog closes.
function Thumb({ d }) {
  const [img, setImg] = useState({ url: '', error: null });
  useEffect(() => {
    let live = true;
    let url = '';
    setImg({ url: '', error: null });
    fetchImage('/v1/qr-codes/' + encodeURIComponent(d.id) + '/image').then(blob => {
      if (!live) return;
      url = URL.createObjectURL(blob);
      setImg({ url, error: null });
    }, e => live && setImg({ url: '', error: e }));
    return () => { live = false; if (url) URL.revokeObjectURL(url); };
  }, [d.id, d.updated_at, d.logo ? d.logo.digest : '']); // updated_at is to the second: a logo changed within one is seen by its digest
  return html`<div class="qr-thumb" aria-busy=${!img.url && !img.error ? 'true' : 'false'}>
    ${img.url ? html`<img src=${img.url} alt=${'The design ' + d.name} width="64" height="64" />` : null}
    ${!img.url && !img.error ? html`<span class="hint" role="status">Drawing…</span>` : null}
    ${img.error ? html`<span class="hint" title=${img.error.message}>No image: ${img.error.message}</span>` : null}
  </div>`;
}

// LOGO_TYPES are the files a logo may be; LOGO_MAX its size in bytes (the
// API's limits, checked here first so a wrong file is not sent at all).
const LOGO_TYPES = ['image/png', 'image/jpeg'];
const LOGO_MAX = 256 * 1024;

// Logo is a design's logo: added or replaced from a PNG or JPEG file (PUT
// /v1/qr-codes/{id}/logo), shown as the server keeps it (GET …/logo), and
// removed (DELETE …/logo). done and fail report to the list's message.
function Logo({ d, done, fail }) {
  const path = '/v1/qr-codes/' + encodeURIComponent(d.id) + '/logo';
  const [busy, setBusy] = useState('');
  const [url, setUrl] = useState('');
  const digest = d.logo ? d.logo.digest : '';
  useEffect(() => {
    let live = true;
    let u = '';
    setUrl('');
    if (digest) {
      fetchImage(path).then(blob => {
        if (!live) return;
        u = URL.createObjectURL(blob);
        setUrl(u);
      }, () => {});
    }
    return () => { live = false; if (u) URL.revokeObjectURL(u); };
  }, [d.id, digest]);

  const pick = async e => {
    const file = e.target.files[0];
    e.target.value = '';
    if (!file) return;
    if (!LOGO_TYPES.includes(file.type)) {
      fail(new Error('“' + file.name + '” is not a PNG or JPEG image' + (file.type === 'image/svg+xml' ? ' (SVG logos are not accepted: export it as PNG)' : '') + '.'));
      return;
    }
    if (file.size > LOGO_MAX) {
      fail(new Error('“' + file.name + '” is ' + fmtBytes(file.size) + ': a logo may be 256 KB at most.'));
      return;
    }
    setBusy('upload');
    try {
      const u = await upload('PUT', path, file);
      done(u, 'Added the logo to the design “' + u.name + '”; its code is drawn at level H.');
    } catch (err) {
      fail(err);
    } finally {
      setBusy('');
    }
  };
  const remove = async () => {
    setBusy('remove');
    try {
      await call('DELETE', path);
      done(null, 'Removed the logo of the design “' + d.name + '”.');
    } catch (err) {
      fail(err);
    } finally {
      setBusy('');
    }
  };
  const inputId = 'qr-logo-' + d.id;
  return html`<div class="qr-logo">
    ${url ? html`<img class="qr-logo-preview" src=${url} alt=${'Logo of the design ' + d.name} />` : null}
    <input id=${inputId} class="visually-hidden qr-logo-file" type="file" accept="image/png,image/jpeg" disabled=${!!busy} onChange=${pick} aria-describedby=${inputId + '-hint'} />
    <label class=${'button secondary qr-logo-pick' + (busy ? ' disabled' : '')} for=${inputId}>${busy === 'upload' ? 'Uploading…' : d.logo ? 'Replace logo' : 'Add a logo'}</label>
    ${d.logo ? html`<button type="button" class="secondary qr-logo-remove" aria-label=${'Remove the logo of the design ' + d.name} disabled=${!!busy} onClick=${remove}>${busy === 'remove' ? 'Removing…' : 'Remove logo'}</button>` : null}
    <span class="hint" id=${inputId + '-hint'}>${d.logo ? 'The logo is drawn in the centre, at error correction H.' : 'PNG or JPEG, up to 256 KB and 2048 px a side.'}</span>
  </div>`;
}

// Designs lists the link's saved designs (apply, delete) and saves the
// options shown as a new one.
function Designs({ link, opts, applied, apply, unapply }) {
  const { list, error, setError, reload } = useList('/v1/qr-codes?link_id=' + encodeURIComponent(link.id));
  const [notice, setNotice] = useState('');
  const body = name => ({ link_id: link.id, name: name.trim(), options: optionsBody(opts) });
  const { form, set, submit, error: saveError, busy, fields } = useApiForm({ name: '' },
    form => call('POST', '/v1/qr-codes', body(form.name)),
    d => { setNotice('Saved the design “' + d.name + '”.'); reload(); });
  const unplaced = saveError ? Object.keys(fields).filter(k => k !== 'name') : [];

  const remove = async d => {
    setError(null);
    setNotice('');
    try {
      await call('DELETE', '/v1/qr-codes/' + encodeURIComponent(d.id));
      if (applied === d.id) unapply();
      setNotice('Deleted the design “' + d.name + '”.');
      await reload();
    } catch (e) {
      setError(e);
    }
  };

  // update saves the options shown into a design, keeping its name.
  const update = async d => {
    setError(null);
    setNotice('');
    try {
      const u = await call('PATCH', '/v1/qr-codes/' + encodeURIComponent(d.id), { options: optionsBody(opts) });
      setNotice('Updated the design “' + u.name + '” to the options shown.');
      await reload();
      apply(u);
    } catch (e) {
      setError(e);
    }
  };

  // applyFresh reads the design again (GET /v1/qr-codes/{id}) and shows
  // its options as the server holds them now.
  const [reading, setReading] = useState('');
  const applyFresh = async d => {
    setError(null);
    setNotice('');
    setReading(d.id);
    try {
      const fresh = await call('GET', '/v1/qr-codes/' + encodeURIComponent(d.id));
      apply(fresh);
      if (fresh.updated_at !== d.updated_at) await reload();
    } catch (e) {
      setError(e);
      if (e.status === 404) await reload();
    } finally {
      setReading('');
    }
  };

  // logoDone reports a logo added (u, the design after it) or removed
  // (u null) and, if that design is the one shown, shows it as it is now.
  const logoDone = async (d, u, msg) => {
    setError(null);
    setNotice(msg);
    await reload();
    if (applied === d.id) apply(u || { ...d, logo: null });
  };
  const logoFail = e => {
    setNotice('');
    setError(e);
  };

  return html`<section class="qr-designs" aria-labelledby="qr-designs-h">
    <h3 id="qr-designs-h">Saved designs</h3>
    <form id="qr-save" class="qr-save" onSubmit=${submit} novalidate>
      <${Field} id="qr-design-name" name="name" label="Save these options as" required maxlength="100" placeholder="Spring poster" value=${form.name} onInput=${set} error=${fields.name} />
      ${saveError ? html`<p class="msg error" role="alert">${saveError.message}${unplaced.length ? ' (' + unplaced.map(k => k + ': ' + fields[k]).join('; ') + ')' : ''}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Save design'}</button>
      <${CopyAsCurl} method="POST" path="/v1/qr-codes" body=${body(form.name)} /></div>
    </form>
    <${Message} error=${error} notice=${notice} />
    ${!list && !error ? html`<p role="status">Loading designs…</p>` : null}
    ${list && list.data.length === 0 ? html`<p class="empty">No saved designs for this link yet.</p>` : null}
    ${list && list.data.length > 0 ? html`<ul class="qr-design-list" id="qr-designs">${list.data.map(d => html`<li key=${d.id} data-design=${d.id}>
      <${Thumb} d=${d} />
      <div class="qr-design-name"><strong>${d.name}</strong>${applied === d.id ? html` <span class="qr-applied">(shown)</span>` : null}</div>
      <div class="hint">${d.options.format.toUpperCase()} · ${d.options.size} px · margin ${d.options.margin} · level ${d.logo ? 'H (logo)' : d.options.level} · ${d.options.fg} on ${d.options.bg}</div>
      <${Logo} d=${d} done=${(u, msg) => logoDone(d, u, msg)} fail=${logoFail} />
      <div class="actions">
        <button type="button" class="secondary qr-apply" aria-label=${'Apply the design ' + d.name} disabled=${reading === d.id} onClick=${() => applyFresh(d)}>${reading === d.id ? 'Reading…' : 'Apply'}</button>
        <button type="button" class="secondary qr-update" aria-label=${'Update the design ' + d.name + ' to the options shown'} onClick=${() => update(d)}>Update to these options</button>
        <${Confirm} label="Delete" question=${'Delete the design “' + d.name + '”?'} onConfirm=${() => remove(d)} />
        <${CopyAsCurl} method="PATCH" path=${'/v1/qr-codes/' + d.id} body=${{ options: optionsBody(opts) }} />
      </div>
      <div class="hint">Image for scripts: <code>GET /v1/qr-codes/${d.id}/image</code></div>
    </li>`)}</ul>` : null}
  </section>`;
}
