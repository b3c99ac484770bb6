-- Wire IDs: each kind of record numbers its rows from a sequence of its
-- own, and the ID is the sequence under the store's ID key
-- (link.IDCodec; the key and any legacy maxima are in settings), so that
-- IDs have the bbolt store's form and a record moved between the stores
-- keeps its ID. A row keeps its sequence (seq) too: lists go in creation
-- order by it.
CREATE SEQUENCE ids_usr;
CREATE SEQUENCE ids_ws;
CREATE SEQUENCE ids_inv;
CREATE SEQUENCE ids_aud;

-- Users. email is as the user gave it; email_key is its normal form
-- (link.NormalizeEmail), unique, by which users are found.
CREATE TABLE users (
	id               text PRIMARY KEY,
	seq              bigint NOT NULL CONSTRAINT users_seq_key UNIQUE,
	email            text NOT NULL,
	email_key        text NOT NULL CONSTRAINT users_email_key UNIQUE,
	password_hash    bytea NOT NULL DEFAULT '\x',
	admin            boolean NOT NULL DEFAULT false,
	name             text NOT NULL DEFAULT '',
	disabled         boolean NOT NULL DEFAULT false,
	token_generation bigint NOT NULL DEFAULT 0,
	created_at       timestamptz NOT NULL
);
-- LoadSessions reads the users whose sessions were ended or who are
-- disabled.
CREATE INDEX users_sessions ON users (seq) WHERE token_generation > 0 OR disabled;

-- Logged-out tokens, by their JWT ID, until they would expire anyway.
CREATE TABLE revoked_tokens (
	id         text PRIMARY KEY,
	expires_at timestamptz NOT NULL
);
CREATE INDEX revoked_tokens_expires ON revoked_tokens (expires_at);

-- One-time password links: the SHA-256 of the token, one per user.
CREATE TABLE password_resets (
	token_hash bytea PRIMARY KEY,
	user_id    text NOT NULL CONSTRAINT password_resets_user_key UNIQUE REFERENCES users (id) ON DELETE CASCADE,
	expires_at timestamptz NOT NULL
);
CREATE INDEX password_resets_expires ON password_resets (expires_at);

CREATE TABLE workspaces (
	id         text PRIMARY KEY,
	seq        bigint NOT NULL CONSTRAINT workspaces_seq_key UNIQUE,
	name       text NOT NULL,
	plan       text NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	-- link.Workspace.DataSince: set by imports of data dated before
	-- created_at.
	data_since timestamptz
);

-- Memberships, read by workspace (the primary key) and by user.
CREATE TABLE members (
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	role         text NOT NULL CHECK (role IN ('read', 'read_write', 'owner')),
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX members_user ON members (user_id);

-- Former members: a user removed from (or who left) a workspace and not
-- a member again since.
CREATE TABLE former_members (
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	removed_at   timestamptz NOT NULL,
	PRIMARY KEY (workspace_id, user_id)
);

-- Invitations, kept once used or revoked (for a while) so that their link
-- says why it no longer works. One pending invitation per e-mail and
-- workspace: pending depends on the clock, so CreateInvitation checks it
-- under the workspace's row lock.
CREATE TABLE invitations (
	id           text PRIMARY KEY,
	seq          bigint NOT NULL CONSTRAINT invitations_seq_key UNIQUE,
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	email        text NOT NULL,
	role         text NOT NULL,
	token_hash   bytea NOT NULL CONSTRAINT invitations_token_hash_key UNIQUE,
	invited_by   text NOT NULL,
	created_at   timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL,
	accepted_at  timestamptz,
	accepted_by  text,
	revoked_at   timestamptz
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, seq);

-- The audit log. workspace_ids are the workspaces an entry belongs to,
-- empty for an instance-level entry. Lists go newest first by (at, seq).
-- actor_id is "" for the system, which the actor filter names "system".
CREATE TABLE audit_entries (
	seq           bigint PRIMARY KEY,
	id            text NOT NULL CONSTRAINT audit_entries_id_key UNIQUE,
	at            timestamptz NOT NULL,
	workspace_ids text[] NOT NULL DEFAULT '{}',
	actor_type    text NOT NULL,
	actor_id      text NOT NULL DEFAULT '',
	actor_name    text NOT NULL DEFAULT '',
	action        text NOT NULL,
	target_type   text NOT NULL DEFAULT '',
	target_id     text NOT NULL DEFAULT '',
	address       text NOT NULL DEFAULT '',
	-- field → [before, after], either null
	changes       jsonb
);
CREATE INDEX audit_entries_at ON audit_entries (at, seq);
CREATE INDEX audit_entries_instance ON audit_entries (at, seq) WHERE cardinality(workspace_ids) = 0;
CREATE INDEX audit_entries_workspaces ON audit_entries USING gin (workspace_ids);
CREATE INDEX audit_entries_actor ON audit_entries (actor_id, at, seq);
CREATE INDEX audit_entries_action ON audit_entries (action, at, seq);
CREATE INDEX audit_entries_target ON audit_entries (target_id, at, seq) WHERE target_id <> '';

-- API keys and webhooks, as far as a member's removal reads and changes
-- them (RemoveMember revokes the keys the member made and disables their
-- webhooks); their services add the rest of their columns.
CREATE SEQUENCE ids_key;
CREATE TABLE keys (
	id                         text PRIMARY KEY,
	seq                        bigint NOT NULL CONSTRAINT keys_seq_key UNIQUE,
	workspace_id               text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	created_at                 timestamptz NOT NULL,
	expires_at                 timestamptz,
	revoked_at                 timestamptz,
	grace_ends_at              timestamptz,
	-- the user or key that made the key (link.KeyCreator)
	creator_type               text NOT NULL DEFAULT '',
	creator_id                 text NOT NULL DEFAULT '',
	keep_when_creator_disabled boolean NOT NULL DEFAULT false
);
CREATE INDEX keys_workspace ON keys (workspace_id, seq);

CREATE SEQUENCE ids_wh;
CREATE TABLE webhooks (
	id              text PRIMARY KEY,
	seq             bigint NOT NULL CONSTRAINT webhooks_seq_key UNIQUE,
	workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	url             text NOT NULL,
	events          text[] NOT NULL DEFAULT '{}',
	enabled         boolean NOT NULL DEFAULT true,
	description     text NOT NULL DEFAULT '',
	disabled_reason text NOT NULL DEFAULT '',
	creator_type    text NOT NULL DEFAULT '',
	creator_id      text NOT NULL DEFAULT '',
	created_at      timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL
);
CREATE INDEX webhooks_workspace ON webhooks (workspace_id, seq);
