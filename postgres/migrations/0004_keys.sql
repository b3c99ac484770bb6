-- API keys: the columns the key service keeps beyond what a member's
-- removal reads (0003). hash is the SHA-256 of the whole token, one key's
-- only by constraint, so that two instances cannot store one token twice.
-- A row from before this step (none outside tests: the store was not
-- offered yet) gets a hash no token has.
ALTER TABLE keys
	ADD COLUMN name         text NOT NULL DEFAULT '',
	ADD COLUMN scope        text NOT NULL DEFAULT 'read' CHECK (scope IN ('read', 'read_write')),
	ADD COLUMN hash         bytea,
	ADD COLUMN start        text NOT NULL DEFAULT '',
	-- the key that replaced a rotated one
	ADD COLUMN replaced_by  text,
	-- the key's expiry or the end of its grace period is in the audit log
	-- (key.expired, key.grace_ended): RecordEndedKeys writes each once
	ADD COLUMN end_recorded boolean NOT NULL DEFAULT false;
UPDATE keys SET hash = sha256(convert_to('no token: ' || id, 'UTF8')) WHERE hash IS NULL;
ALTER TABLE keys
	ALTER COLUMN hash SET NOT NULL,
	ADD CONSTRAINT keys_hash_key UNIQUE (hash);
-- The cap counts a workspace's keys not revoked (then drops those past
-- their expiry or grace).
CREATE INDEX keys_workspace_unrevoked ON keys (workspace_id) WHERE revoked_at IS NULL;
-- RecordEndedKeys finds the keys whose expiry or grace period ended and
-- is not recorded yet (LEAST ignores a NULL).
CREATE INDEX keys_ending ON keys (LEAST(expires_at, grace_ends_at))
	WHERE NOT end_recorded AND revoked_at IS NULL AND (expires_at IS NOT NULL OR grace_ends_at IS NOT NULL);

-- Key usage (TouchKey): counted in memory by each instance and added
-- here in batches. A table of its own, so that writing the counts takes
-- no lock a key's revocation or a member's removal waits for.
CREATE TABLE key_usage (
	key_id        text PRIMARY KEY REFERENCES keys (id) ON DELETE CASCADE,
	request_count bigint NOT NULL DEFAULT 0,
	last_used_at  timestamptz
);

-- The destination blocklist entries added through the admin API, listed
-- in byte order of the entry (as the data file keeps them).
CREATE TABLE blocklist (
	entry      text COLLATE "C" PRIMARY KEY,
	created_at timestamptz NOT NULL,
	created_by text NOT NULL DEFAULT ''
);
