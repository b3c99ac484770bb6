// account.js is the Account page: the user's name, their password, and
// signing out of every session.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call, session } from './api.js';
import { Message, Field, CopyAsCurl, Confirm, fmtDate, useAction } from './ui.js';

export function AccountPage({ me, reloadMe, signedOutEverywhere }) {
  return html`<h1>Account</h1>
    <p>${me.email}${me.admin ? ' · instance admin' : ''} · since ${fmtDate(me.created_at)}</p>
    <${NameForm} me=${me} reloadMe=${reloadMe} />
    <${PasswordForm} />
    <${LogoutAll} done=${signedOutEverywhere} />`;
}

// useSubmit runs one request of a form with useAction and has the API's
// field errors at hand.
function useSubmit() {
  const a = useAction();
  return { ...a, busy: !!a.busy, fields: (a.error && a.error.fields) || {} };
}

function NameForm({ me, reloadMe }) {
  const [name, setName] = useState(me.name);
  const s = useSubmit();
  const body = { name };
  const submit = e => {
    e.preventDefault();
    s.act(async () => {
      await call('PATCH', '/v1/me', body);
      reloadMe();
      return 'Your name is saved.';
    }, 'name');
  };
  return html`<section class="card" aria-labelledby="account-name">
    <h2 id="account-name">Name</h2>
    <form id="name-form" onSubmit=${submit} novalidate>
      <${Field} id="account-name-input" name="name" label="Your name" maxlength="100" autocomplete="name" value=${name} onInput=${e => setName(e.target.value)} error=${s.fields.name} />
      <${Message} error=${Object.keys(s.fields).length ? null : s.error} notice=${s.notice} />
      <div class="actions"><button type="submit" disabled=${s.busy}>Save name</button>
      <${CopyAsCurl} method="PATCH" path="/v1/me" body=${body} /></div>
    </form>
  </section>`;
}

function PasswordForm() {
  const [form, setForm] = useState({ current_password: '', new_password: '' });
  const s = useSubmit();
  const set = e => setForm({ ...form, [e.target.name]: e.target.value });
  const submit = e => {
    e.preventDefault();
    s.act(async () => {
      const res = await call('POST', '/v1/me/password', form);
      session.token = res.token; // this session goes on with a fresh token
      setForm({ current_password: '', new_password: '' });
      return 'Your password is changed. Your other sessions are signed out.';
    }, 'password');
  };
  return html`<section class="card" aria-labelledby="account-password">
    <h2 id="account-password">Password</h2>
    <form id="password-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="current_password" label="Current password" type="password" autocomplete="current-password" value=${form.current_password} onInput=${set} error=${s.fields.current_password} />
        <${Field} id="new_password" label="New password (at least 10 characters)" type="password" autocomplete="new-password" value=${form.new_password} onInput=${set} error=${s.fields.new_password} />
      </div>
      <${Message} error=${Object.keys(s.fields).length ? null : s.error} notice=${s.notice} />
      <div class="actions"><button type="submit" disabled=${s.busy}>Change password</button>
      <${CopyAsCurl} method="POST" path="/v1/me/password" body=${{ current_password: '…', new_password: '…' }} /></div>
    </form>
  </section>`;
}

function LogoutAll({ done }) {
  const s = useSubmit();
  const go = () => s.act(async () => {
    await call('POST', '/v1/auth/logout-all');
    done();
  }, 'logout');
  return html`<section class="card" aria-labelledby="account-sessions">
    <h2 id="account-sessions">Sessions</h2>
    <p>Signing out everywhere ends every session of your account, on every device, this one included. API keys keep working.</p>
    <${Message} error=${s.error} />
    <div class="actions"><${Confirm} label="Sign out everywhere" question="End every session of your account?" onConfirm=${go} busy=${s.busy} />
    <${CopyAsCurl} method="POST" path="/v1/auth/logout-all" /></div>
  </section>`;
}
