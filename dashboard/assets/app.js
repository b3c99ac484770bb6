// app.js is the dashboard's shell: sign-in, the navigation, the workspace
// switcher and the client-side routes under /app/.
import { html, render, useState, useEffect, useLayoutEffect } from './vendor/htm-preact-standalone.js';
import { call, session, whenSignedOut } from './api.js';
import { Message, Field } from './ui.js';
import { LinksPage } from './links.js';
import { AnalyticsPage } from './analytics.js';
import { WebhooksPage } from './webhooks.js';
import { KeysPage } from './keys.js';
import { MembersPage } from './members.js';
import { AuditPage } from './audit.js';
import { CampaignsPage } from './campaigns.js';
import { DomainsPage } from './domains.js';
import { InvitePage } from './invite.js';
import { AccountPage } from './account.js';
import { WorkspacePage } from './workspace.js';
import { AdminPage } from './admin.js';
import { ImportPage } from './import.js';

// pages are the built pages, in the order of the navigation; only these
// appear in it. personal pages sit apart from the workspace's (beside the
// account), noWorkspace ones open without a workspace, admin ones only
// for the instance admin.
const pages = [
  { path: 'links', title: 'Links', component: LinksPage },
  { path: 'analytics', title: 'Analytics', component: AnalyticsPage },
  { path: 'campaigns', title: 'Campaigns', component: CampaignsPage },
  { path: 'domains', title: 'Domains', component: DomainsPage },
  { path: 'webhooks', title: 'Webhooks', component: WebhooksPage },
  { path: 'keys', title: 'API keys', component: KeysPage },
  { path: 'members', title: 'Members', component: MembersPage },
  { path: 'audit', title: 'Audit log', component: AuditPage },
  { path: 'import', title: 'Import', component: ImportPage },
  { path: 'settings', title: 'Workspace', component: WorkspacePage, noWorkspace: true },
  { path: 'account', title: 'Account', component: AccountPage, noWorkspace: true, personal: true },
  { path: 'admin', title: 'Admin', component: AdminPage, noWorkspace: true, personal: true, admin: true },
];

function currentRoute() {
  return location.pathname.replace(/^\/app\/?/, '').replace(/\/$/, '');
}

export function navigate(path) {
  history.pushState(null, '', '/app/' + path);
  dispatchEvent(new PopStateEvent('popstate'));
}

// SSO_STATE is where the sign-in page keeps the client_state of the
// single sign-on it started, for the token that comes back.
const SSO_STATE = 'linkbolt.sso';

// startSingleSignOn sends the browser to the provider with a fresh
// client_state, which the callback hands back beside the token.
function startSingleSignOn(e) {
  e.preventDefault();
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const state = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  sessionStorage.setItem(SSO_STATE, state);
  location.assign('/v1/auth/oidc/start?client_state=' + state);
}

// pickUpToken takes a token the single sign-on callback put in the
// fragment (/app/#token=…&client_state=…) when it comes from the sign-in
// this tab started, and clears it from the address bar and history. A
// token in a link from anywhere else is ignored: it would sign the person
// in as someone else. It returns a notice when it ignored one.
function pickUpToken() {
  if (currentRoute() === 'invite') return ''; // the invitation's token, read by its page
  const params = new URLSearchParams(location.hash.slice(1));
  const tok = params.get('token');
  const started = sessionStorage.getItem(SSO_STATE);
  let notice = '';
  if (tok) {
    sessionStorage.removeItem(SSO_STATE);
    if (started && params.get('client_state') === started) session.token = tok;
    else notice = 'A sign-in this tab did not start was ignored. Sign in here instead.';
  }
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  return notice;
}

function App() {
  const [route, setRoute] = useState(currentRoute());
  const [me, setMe] = useState(null);
  const [state, setState] = useState(session.token ? 'loading' : 'signed-out');
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(ignoredSignIn);

  // loadMe reads the user and their workspaces; quiet keeps the page on
  // screen while it does (after a change of name).
  const loadMe = async quiet => {
    if (quiet !== true) setState('loading');
    try {
      const m = await call('GET', '/v1/me');
      const ids = m.workspaces.map(w => w.id);
      if (!ids.includes(session.workspace)) session.workspace = ids[0] || '';
      setMe(m);
      setState('signed-in');
      setError(null);
    } catch (e) {
      setError(e);
      setState(session.token ? 'failed' : 'signed-out');
    }
  };

  useEffect(() => {
    const onPop = () => setRoute(currentRoute());
    addEventListener('popstate', onPop);
    whenSignedOut(msg => { setMe(null); setState('signed-out'); setNotice('Your session ended: ' + msg + ' Sign in again.'); });
    if (session.token) loadMe();
    return () => removeEventListener('popstate', onPop);
  }, []);

  useEffect(() => {
    const page = pages.find(p => p.path === route);
    document.title = (route === 'invite' ? 'Join a workspace' : page ? page.title : 'Sign in') + ' · linkbolt';
  }, [route]);

  const signedIn = async tok => {
    session.token = tok;
    setNotice('');
    await loadMe();
  };

  const signOut = async () => {
    try { await call('POST', '/v1/auth/logout'); } catch { /* the token is dropped either way */ }
    session.token = '';
    session.workspace = '';
    setMe(null);
    setState('signed-out');
    setNotice('You are signed out.');
  };

  if (route === 'invite') {
    return html`<${InvitePage} me=${me} onJoined=${async (tok, ws) => {
      if (tok) session.token = tok;
      session.workspace = ws;
      await loadMe();
      navigate('links');
    }} />`;
  }
  if (state === 'loading') return html`<main class="center"><p role="status">Loading…</p></main>`;
  if (state === 'failed') {
    return html`<main class="center"><${Message} error=${error} />
      <button onClick=${loadMe}>Try again</button> <button class="secondary" onClick=${signOut}>Sign out</button></main>`;
  }
  if (state === 'signed-out') return html`<${SignIn} onSignedIn=${signedIn} notice=${notice} />`;

  const shell = content => html`<${Shell} me=${me} route=${route} signOut=${signOut} onSwitch=${loadMe}>${content}</${Shell}>`;
  let page = pages.find(p => p.path === route);
  if (!page) {
    if (route !== '') return shell(html`<h1>Page not found</h1><p>There is no dashboard page at /app/${route}.</p>`);
    page = pages[0];
  }
  if (page.admin && !me.admin) {
    return shell(html`<h1>${page.title}</h1><p class="msg error" role="alert">Only the instance admin can open this page. You are signed in as ${me.email}, who is not.</p>`);
  }
  const Page = page.component;
  const ws = me.workspaces.find(w => w.id === session.workspace);
  // switchTo opens another workspace (one just made) on its Links page.
  const switchTo = async id => {
    session.workspace = id;
    await loadMe(true);
    navigate('links');
  };
  return html`<${Shell} me=${me} route=${page.path} signOut=${signOut} onSwitch=${loadMe}>
    <${Page} key=${session.workspace} workspace=${ws} me=${me} reloadMe=${() => loadMe(true)} switchTo=${switchTo}
      signedOutEverywhere=${() => { session.token = ''; setMe(null); setState('signed-out'); setNotice('You are signed out everywhere.'); }} />
  </${Shell}>`;
}

// Shell is the frame of every signed-in page: the brand, the workspace
// switcher and, in #main-menu, the navigation (the workspace's pages, then
// Account and Admin) with the signed-in person and Sign out. Wide, it is two
// rows; narrow (under 64rem), a Menu button opens it as a list, and it
// closes on a choice or Escape.
function Shell({ me, route, signOut, onSwitch, children }) {
  const [open, setOpen] = useState(false);
  // A layout effect: Escape works as soon as the open menu is on screen.
  useLayoutEffect(() => {
    if (!open) return undefined;
    const onKey = e => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      const b = document.getElementById('menu-button');
      if (b) b.focus();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [open]);
  const go = (e, path) => { e.preventDefault(); setOpen(false); navigate(path); };
  const shown = pages.filter(p => !p.admin || me.admin);
  const link = p => html`<li><a href=${'/app/' + p.path} aria-current=${p.path === route ? 'page' : undefined} onClick=${e => go(e, p.path)}>${p.title}</a></li>`;
  const current = pages.find(p => p.path === route);
  return html`<div class="shell">
    <header class="top">
      <div class="bar">
        <a class="brand" href="/app/links" onClick=${e => go(e, 'links')}>linkbolt</a>
        ${me.workspaces.length > 0 ? html`<label class="switcher"><span class="visually-hidden">Workspace</span>
          <select id="workspace" aria-label="Workspace" value=${session.workspace} onChange=${e => { session.workspace = e.target.value; onSwitch(); }}>
            ${me.workspaces.map(w => html`<option value=${w.id}>${w.name}${w.role ? ' (' + w.role.replace('_', ' ') + ')' : ''}</option>`)}
          </select></label>` : null}
        <button type="button" id="menu-button" class="secondary menu-button" aria-expanded=${open ? 'true' : 'false'} aria-controls="main-menu"
          onClick=${() => setOpen(!open)}>Menu</button>
      </div>
      <div id="main-menu" class=${open ? 'menu open' : 'menu'}>
        <nav aria-label="Main">
          <ul class="pages">${shown.filter(p => !p.personal).map(link)}</ul>
          <ul class="personal">${shown.filter(p => p.personal).map(link)}</ul>
        </nav>
        <div class="session">
          <span class="who" title=${me.email}>${me.name || me.email}</span>
          <button type="button" class="secondary" id="sign-out" onClick=${signOut}>Sign out</button>
        </div>
      </div>
    </header>
    <main>${me.workspaces.length === 0 && !(current || {}).noWorkspace
      ? html`<h1>No workspace</h1><p>You are not a member of any workspace yet. Ask an owner for an invitation, or
        <a href="/app/settings" onClick=${e => go(e, 'settings')}>create a workspace</a>.</p>`
      : children}</main>
  </div>`;
}

function SignIn({ onSignedIn, notice }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [sso, setSSO] = useState('checking');

  useEffect(() => {
    // Single sign-on is on when its start, asked with check=true, answers
    // 204; it is 404 when off and 503 while the provider cannot be reached.
    call('GET', '/v1/auth/oidc/start?check=true').then(() => setSSO('on'), () => setSSO('off'));
  }, []);

  const submit = async e => {
    e.preventDefault();
    const body = Object.fromEntries(new FormData(e.target));
    setBusy(true);
    try {
      const res = await call('POST', '/v1/auth/login', body);
      await onSignedIn(res.token);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return html`<main class="center narrow" data-sso=${sso}>
    <h1>Sign in to linkbolt</h1>
    <${Message} notice=${notice} error=${error} />
    <form id="sign-in" onSubmit=${submit}>
      <${Field} id="email" label="E-mail" type="email" required autocomplete="username" />
      <${Field} id="password" label="Password" type="password" required autocomplete="current-password" />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    ${sso === 'on' ? html`<p><a class="button secondary" href="/v1/auth/oidc/start" onClick=${startSingleSignOn}>Sign in with single sign-on</a></p>` : null}
  </main>`;
}


const ignoredSignIn = pickUpToken();
const root = document.getElementById('root');
root.textContent = ''; // the "Loading" line of the page
render(html`<${App} />`, root);
