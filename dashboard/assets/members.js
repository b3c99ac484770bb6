// members.js is the team page: the members with their roles, changing a
// role, removing a member, leaving; invitations made, shown once, listed
// and revoked. Owners manage; everyone else sees the list and may leave.
import { html, useState, useEffect } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, Field, CopyButton, CopyAsCurl, Confirm, fmtDate, useAction, useApiForm, useList } from './ui.js';

const roles = [
  { value: 'read', label: 'read' },
  { value: 'read_write', label: 'read and write' },
  { value: 'owner', label: 'owner' },
];
const roleLabel = r => (roles.find(x => x.value === r) || { label: r }).label;

function RoleSelect({ id, value, onChange, label = 'Role' }) {
  return html`<select id=${id} name="role" aria-label=${label} value=${value} onChange=${onChange}>
    ${roles.map(r => html`<option value=${r.value}>${r.label}</option>`)}
  </select>`;
}

export function MembersPage({ workspace, me, reloadMe }) {
  const owner = workspace && workspace.role === 'owner';
  const { list: members, error, setError, reload, version } = useList('/v1/members');
  const { act, notice, setNotice } = useAction({ reload, setError });

  const who = m => m.name ? m.name + ' (' + m.email + ')' : m.email;
  const changeRole = (m, role) => act(async () => {
    const got = await call('PATCH', '/v1/members/' + m.user_id, { role });
    if (got.user_id === me.id) await reloadMe();
    return who(m) + ' is now ' + roleLabel(role) + '.';
  });
  const remove = m => act(async () => {
    await call('DELETE', '/v1/members/' + m.user_id);
    return who(m) + ' is no longer a member.';
  });
  const leave = async () => {
    setError(null);
    try {
      await call('DELETE', '/v1/members/' + me.id);
      await reloadMe();
    } catch (e) {
      setError(e);
    }
  };

  return html`<h1>Members</h1>
    <section aria-labelledby="members-list">
      <h2 id="members-list">Members of ${workspace ? workspace.name : 'this workspace'}</h2>
      <${Message} error=${error} notice=${notice} />
      ${!members && !error ? html`<p role="status">Loading members…</p>` : null}
      ${members && members.data.length === 0 ? html`<p class="empty">No members.</p>` : null}
      ${members && members.data.length > 0 ? html`<div class="table-wrap"><table id="members">
        <thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Joined</th>${owner ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : null}</tr></thead>
        <tbody>${members.data.map(m => html`<tr key=${m.user_id + m.role + version} data-member=${m.user_id}>
          <td>${m.name || '—'}${m.user_id === me.id ? html` <small class="hint">(you)</small>` : null}</td>
          <td>${m.email}</td>
          <td>${owner ? html`<${MemberRole} m=${m} onChange=${role => changeRole(m, role)} />` : roleLabel(m.role)}</td>
          <td class="when">${fmtDate(m.joined_at)}</td>
          ${owner ? m.user_id === me.id ? html`<td></td>` : html`<td class="actions"><${Confirm} label="Remove" question=${'Remove ' + who(m) + ' from the workspace? The API keys they made are revoked for good (except keys an owner keeps), and their webhooks are disabled.'} onConfirm=${() => remove(m)} />
            <${CopyAsCurl} method="DELETE" path=${'/v1/members/' + m.user_id} /></td>` : null}
        </tr>`)}</tbody>
      </table></div>` : null}
    </section>
    <section class="card" aria-labelledby="leave">
      <h2 id="leave">Leave this workspace</h2>
      <p>You lose access at once: the API keys you made are revoked for good and your webhooks disabled. An owner can invite you again.${owner ? ' The last owner cannot leave: make another member owner first.' : ''}</p>
      <div class="actions" id="leave-actions"><${Confirm} label="Leave workspace" question=${'Leave ' + (workspace ? workspace.name : 'this workspace') + '?'} onConfirm=${leave} />
      <${CopyAsCurl} method="DELETE" path=${'/v1/members/' + me.id} /></div>
    </section>
    ${owner ? html`<${Invitations} members=${members} onInvited=${() => { setError(null); setNotice(''); }} />` : html`<section aria-labelledby="invitations"><h2 id="invitations">Invitations</h2>
      <p class="empty">Only the workspace's owners invite people. Ask one for an invitation link to give.</p></section>`}`;
}

// MemberRole changes one member's role with its own small form.
function MemberRole({ m, onChange }) {
  const [role, setRole] = useState(m.role);
  return html`<form class="inline role-form" onSubmit=${e => { e.preventDefault(); onChange(role); }}>
    <${RoleSelect} id=${'role-' + m.user_id} value=${role} label=${'Role of ' + m.email} onChange=${e => setRole(e.target.value)} />
    <button type="submit" class="secondary" disabled=${role === m.role}>Change</button>
    ${role !== m.role ? html`<${CopyAsCurl} method="PATCH" path=${'/v1/members/' + m.user_id} body=${{ role }} />` : null}
  </form>`;
}

function Invitations({ members, onInvited }) {
  const { list, error, setError, reload } = useList('/v1/invitations');
  const { act, notice, setNotice } = useAction({ reload, setError });
  const [shown, setShown] = useState(null); // an invitation just made, with its link

  const revoke = inv => act(async () => {
    await call('DELETE', '/v1/invitations/' + inv.id);
    if (shown && shown.id === inv.id) setShown(null);
    return 'Revoked the invitation for ' + inv.email + '. Its link no longer works.';
  });
  const inviter = id => {
    const m = members && members.data.find(x => x.user_id === id);
    return m ? (m.name || m.email) : id;
  };

  return html`<${CreateInvitation} onCreated=${inv => { setShown(inv); setNotice(''); onInvited(); reload(); }} />
    ${shown ? html`<section class="card once" aria-labelledby="new-invitation">
      <h2 id="new-invitation">Invitation for ${shown.email}</h2>
      <p class="warning"><strong>Copy this link now and give it to ${shown.email}. It is shown only this once and cannot be shown again.</strong></p>
      <p class="secret"><code id="invitation-url">${shown.url}</code> <${CopyButton} text=${shown.url} label="Copy link" id="copy-invitation" /></p>
      <p>It works once, for ${shown.email} only, until ${fmtDate(shown.expires_at)}.</p>
      <button type="button" class="secondary" id="invitation-copied" onClick=${() => setShown(null)}>I have copied it</button>
    </section>` : null}
    <section aria-labelledby="invitations">
      <h2 id="invitations">Pending invitations</h2>
      <${Message} error=${error} notice=${notice} />
      ${!list && !error ? html`<p role="status">Loading invitations…</p>` : null}
      ${list && list.data.length === 0 ? html`<p class="empty">No pending invitations.</p>` : null}
      ${list && list.data.length > 0 ? html`<div class="table-wrap"><table id="invitations-table">
        <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>${list.data.map(inv => html`<tr key=${inv.id} data-invitation=${inv.id}>
          <td>${inv.email}</td>
          <td>${roleLabel(inv.role)}</td>
          <td>${inviter(inv.invited_by)}</td>
          <td class="when">${fmtDate(inv.created_at)}</td>
          <td class="when">${fmtDate(inv.expires_at)}</td>
          <td class="actions"><${Confirm} label="Revoke" question=${'Revoke the invitation for ' + inv.email + '?'} onConfirm=${() => revoke(inv)} />
            <${CopyAsCurl} method="DELETE" path=${'/v1/invitations/' + inv.id} /></td>
        </tr>`)}</tbody>
      </table></div>` : null}
    </section>`;
}

function CreateInvitation({ onCreated }) {
  const { form, set, submit, error, busy, fields: f } = useApiForm(
    { email: '', role: 'read_write' }, form => call('POST', '/v1/invitations', form), onCreated);
  return html`<section class="card" aria-labelledby="create-invitation">
    <h2 id="create-invitation">Invite someone</h2>
    <p class="hint">linkbolt sends no mail: you get a one-time link to give the person.</p>
    <form id="invite-form" onSubmit=${submit} novalidate>
      <div class="row">
        <${Field} id="invite-email" name="email" label="E-mail" type="email" required maxlength="254" placeholder="sam@example.com" value=${form.email} onInput=${set} error=${f.email} />
        <div class="field"><label for="invite-role">Role</label>
          <${RoleSelect} id="invite-role" value=${form.role} onChange=${set} />
          ${f.role ? html`<small class="field-error">${f.role}</small>` : null}</div>
      </div>
      ${error ? html`<p class="msg error" role="alert">${error.message}</p>` : null}
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Inviting…' : 'Create invitation'}</button>
      <${CopyAsCurl} method="POST" path="/v1/invitations" body=${form} /></div>
    </form>
  </section>`;
}
