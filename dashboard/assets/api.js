// api.js is the dashboard's only way to the server: the documented /v1 API,
// with the session's JWT in memory and in sessionStorage (never in a URL,
// never in localStorage, gone when the tab closes).

const TOKEN = 'linkbolt.token';
const WORKSPACE = 'linkbolt.workspace';

export const session = {
  get token() { return sessionStorage.getItem(TOKEN) || ''; },
  set token(v) { v ? sessionStorage.setItem(TOKEN, v) : sessionStorage.removeItem(TOKEN); },
  get workspace() { return sessionStorage.getItem(WORKSPACE) || ''; },
  set workspace(v) { v ? sessionStorage.setItem(WORKSPACE, v) : sessionStorage.removeItem(WORKSPACE); },
};

// ApiError carries the problem+json answer: detail for a message, errors
// for the fields.
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || 'The server answered ' + status + '.');
    this.status = status;
    this.code = problem.code || '';
    this.fields = {};
    for (const e of problem.errors || []) this.fields[e.field] = e.message;
  }
}

let onSignedOut = () => {};
export function whenSignedOut(f) { onSignedOut = f; }

// send sends one request with the session's credentials and returns the
// answer when it is a success; a problem is thrown as an ApiError, and a
// 401 to a signed-in request ends the session.
async function send(method, path, body, accept, signal) {
  const headers = { Accept: accept };
  if (session.token) headers.Authorization = 'Bearer ' + session.token;
  if (session.workspace) headers['X-Workspace-Id'] = session.workspace;
  // A file (a Blob) is sent as it is, with its own type; anything else as JSON.
  const file = body instanceof Blob;
  if (file) headers['Content-Type'] = body.type || 'application/octet-stream';
  else if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, signal, body: body === undefined || file ? body : JSON.stringify(body) });
  } catch (e) {
    if (signal && signal.aborted) throw e;
    throw new ApiError(0, { detail: 'The server cannot be reached. Check that linkbolt is running.' });
  }
  if (res.ok) return res;
  const type = res.headers.get('Content-Type') || '';
  const err = new ApiError(res.status, type.includes('json') ? await res.json() : {});
  if (res.status === 401 && session.token && path !== '/v1/auth/login') {
    session.token = '';
    onSignedOut(err.message);
  }
  throw err;
}

// call sends one request and returns the decoded JSON (null for 204).
export async function call(method, path, body) {
  const res = await send(method, path, body, 'application/json');
  if (res.status === 204) { await res.text(); return null; }
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : {};
}

// upload sends a file as the body of a request (its type as the
// Content-Type) and returns the decoded JSON answer.
export async function upload(method, path, file) {
  return (await send(method, path, file, 'application/json')).json();
}

// fetchFile reads a file the API answers (an export, a backup, an image)
// with the session's credentials, which a plain link or an <img> could not
// send, and returns the response to read as a blob or as text.
export function fetchFile(path) {
  return send('GET', path, undefined, '*/*');
}

// stream reads the server-sent events of path (GET, with the session's
// credentials, which EventSource could not send) and calls onEvent(name,
// data) with each event's name and decoded JSON data, until signal aborts
// or the server ends it; it resolves then, and rejects with an ApiError
// when the server refuses it.
export async function stream(path, onEvent, signal) {
  const res = await send('GET', path, undefined, 'text/event-stream', signal);
  const reader = res.body.getReader();
  const text = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += text.decode(value, { stream: true });
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let name = '', data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) name = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (name && data) onEvent(name, JSON.parse(data));
      }
    }
  } catch (e) {
    if (signal.aborted) return;
    throw new ApiError(0, { detail: 'The live stream was cut off. Watch again to reconnect.' });
  }
}

// saveFile hands blob to the browser as a download named name.
export function saveFile(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

// curl renders a request as the command that sends it with an API key;
// the session token never appears in it.
export function curl(method, path, body) {
  const q = s => "'" + String(s).replace(/'/g, "'\\''") + "'";
  // Double quotes let the shell put the key in.
  const parts = ['curl', '-X', method, q(location.origin + path), '-H', '"Authorization: Bearer $LINKBOLT_KEY"'];
  if (body !== undefined) parts.push('-H', q('Content-Type: application/json'), '-d', q(JSON.stringify(body)));
  return parts.join(' ');
}
