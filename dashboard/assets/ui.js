// ui.js holds the small pieces every page uses: messages, fields that show
// the API's errors, copy buttons, "copy as curl", dates and numbers in the
// browser's locale.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call, curl } from './api.js';

export function fmtDate(s) {
  return s ? new Date(s).toLocaleString() : '—';
}

// useApiForm keeps a form's fields and sends them with send(form): while
// it waits, busy; a refusal stays in error (its field errors in fields);
// an answer goes to onDone and the form starts again from initial.
export function useApiForm(initial, send, onDone) {
  const [form, setForm] = useState(initial);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const set = e => setForm({ ...form, [e.target.name]: e.target.value });
  const submit = async e => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await send(form);
      setForm(initial);
      onDone(answer);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { form, set, submit, error, busy, fields: (error && error.fields) || {} };
}

// useList reads path (GET) when the page opens; reload() reads it again
// and resolves with the list (null when refused: the refusal is in error),
// so a page can show what a change did together with the list after it.
// version counts the reads, for keys that must start rows afresh (a form
// showing a refused change). setError stays the page's.
export function useList(path) {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [version, setVersion] = useState(0);
  const got = l => { setList(l); setVersion(n => n + 1); return l; };
  useEffect(() => {
    let live = true;
    call('GET', path).then(l => live && got(l), e => live && setError(e));
    return () => { live = false; };
  }, [path]);
  const reload = async () => {
    try {
      return got(await call('GET', path));
    } catch (e) {
      setError(e);
      return null;
    }
  };
  return { list, error, setError, reload, version };
}

// useAction runs what a page's buttons ask: act(f, key) clears the error
// and the notice, marks key busy, runs f and shows f's answer, a sentence,
// as the notice. Given a list read with useList (its reload and setError),
// it reads the list again after f, after a refusal too, so that the page
// shows what the server holds and the notice comes with the list it speaks
// of, never before it; a refusal is then the list's error. Without a list
// the hook keeps the error itself.
export function useAction(list) {
  const [ownError, setOwnError] = useState(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState('');
  const setError = list ? list.setError : setOwnError;
  const act = async (f, key = '') => {
    setError(null);
    setNotice('');
    setBusy(key);
    let said = '';
    let failed = null;
    try {
      said = await f();
    } catch (e) {
      failed = e;
    }
    const fresh = list ? await list.reload() : true;
    setBusy('');
    if (failed) setError(failed); else if (fresh && said) setNotice(said);
  };
  return { act, busy, notice, setNotice, error: ownError };
}

// usePages reads a list a page at a time (the API's next_cursor):
// load(path) reads its first page, load(path, after) the page after the
// cursor after, added to entries; cursor is the next page's, none after
// the last.
export function usePages() {
  const [entries, setEntries] = useState(null);
  const [cursor, setCursor] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const load = async (path, after) => {
    setBusy(true);
    setError(null);
    try {
      const page = await call('GET', after ? path + (path.includes('?') ? '&' : '?') + new URLSearchParams({ cursor: after }) : path);
      setEntries(old => after && old ? old.concat(page.data) : page.data);
      setCursor(page.next_cursor);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return { entries, setEntries, cursor, error, setError, busy, load };
}

export function fmtNumber(n) {
  return (n || 0).toLocaleString();
}

// count says n things in the browser's locale: "1 link", "2,345 links".
export function count(n, one, many) {
  return fmtNumber(n) + ' ' + (n === 1 ? one : many);
}

// Message shows an error or a notice; role=alert makes screen readers say it.
export function Message({ error, notice }) {
  if (error) return html`<p class="msg error" role="alert">${error.message || String(error)}</p>`;
  if (notice) return html`<p class="msg notice" role="status">${notice}</p>`;
  return null;
}

// Field is a labelled input with the API's message for it underneath.
export function Field({ id, label, error, hint, ...props }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} name=${id} aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? id + '-error' : hint ? id + '-hint' : undefined} ...${props} />
    ${hint && !error ? html`<small id=${id + '-hint'} class="hint">${hint}</small>` : null}
    ${error ? html`<small id=${id + '-error'} class="field-error">${error}</small>` : null}
  </div>`;
}

// CopyButton copies text to the clipboard and says whether it worked.
export function CopyButton({ text, label = 'Copy', id, describe }) {
  const [state, setState] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('Copied');
    } catch {
      setState('Copy failed: select the text and copy it');
    }
  };
  return html`<button type="button" class="secondary" id=${id} aria-label=${describe} onClick=${copy}>${label}</button>${state ? html` <span class="copied" role="status">${state}</span>` : null}`;
}

// CopyAsCurl shows the request a form sends as a curl command with an API
// key placeholder, so the dashboard teaches the API it is built on.
export function CopyAsCurl({ method, path, body }) {
  const cmd = curl(method, path, body);
  return html`<details class="curl">
    <summary>Copy as curl</summary>
    <pre><code>${cmd}</code></pre>
    <${CopyButton} text=${cmd} label="Copy command" />
  </details>`;
}

// Confirm asks before something that cannot be undone.
export function Confirm({ label, question, onConfirm, busy }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${label}</button>`;
  return html`<span class="confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" disabled=${busy} onClick=${async () => { await onConfirm(); setAsking(false); }}>Yes, ${label.toLowerCase()}</button>
    <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}
