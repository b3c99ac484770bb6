// invite.js accepts an invitation: the link is /app/invite#token=…, and the
// token is read from the fragment (which the server never sees), then
// cleared from the address bar.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call, session } from './api.js';
import { Message, Field } from './ui.js';

let inviteToken = '';

export function InvitePage({ me, onJoined }) {
  if (!inviteToken) {
    inviteToken = new URLSearchParams(location.hash.slice(1)).get('token') || '';
    if (location.hash) history.replaceState(null, '', location.pathname);
  }
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);

  const accept = async (body, jwt) => {
    setBusy(true);
    setError(null);
    try {
      if (jwt) session.token = jwt;
      const res = await call('POST', '/v1/invitations/accept', { token: inviteToken, ...body });
      inviteToken = '';
      await onJoined(res.token || '', res.workspace.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const signInAndAccept = async e => {
    e.preventDefault();
    setError(null);
    try {
      const res = await call('POST', '/v1/auth/login', Object.fromEntries(new FormData(e.target)));
      await accept({}, res.token);
    } catch (err) {
      setError(err);
    }
  };
  const f = (error && error.fields) || {};

  if (!inviteToken) {
    return html`<main class="center narrow"><h1>Join a linkbolt workspace</h1>
      <p class="msg error" role="alert">This page needs the invitation link you were sent: it ends in #token=….</p>
      <p><a href="/app/">Open the dashboard</a></p></main>`;
  }
  return html`<main class="center narrow">
    <h1>Join a linkbolt workspace</h1>
    <p>This invitation link works once.</p>
    <${Message} error=${error} />
    ${session.token ? html`<section><h2>Signed in${me ? ' as ' + me.email : ''}</h2>
      <button type="button" id="accept" disabled=${busy} onClick=${() => accept({})}>Accept the invitation</button></section>` : html`
    <section><h2>New to linkbolt</h2>
      <form id="invite-new" onSubmit=${e => { e.preventDefault(); accept(Object.fromEntries(new FormData(e.target))); }}>
        <${Field} id="invite-name" name="name" label="Your name" required autocomplete="name" error=${f.name} />
        <${Field} id="invite-password" name="password" label="Password (at least 10 characters)" type="password" minlength="10" required autocomplete="new-password" error=${f.password} />
        <button type="submit" disabled=${busy}>Create account and join</button>
      </form></section>
    <section><h2>I have an account</h2>
      <form id="invite-old" onSubmit=${signInAndAccept}>
        <${Field} id="invite-email" name="email" label="E-mail" type="email" required autocomplete="username" />
        <${Field} id="invite-login-password" name="password" label="Password" type="password" required autocomplete="current-password" />
        <button type="submit" disabled=${busy}>Sign in and join</button>
      </form></section>`}
  </main>`;
}
