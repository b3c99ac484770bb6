package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var keysListCommand = &command{
	name:     "keys list",
	synopsis: "keys list [--workspace ID] [--config FILE] [--token TOKEN]",
	summary:  "list the API keys of every workspace",
	about: `List the API keys of every workspace (or of one with --workspace): ID,
workspace, name, scope, the token's first characters, state, expiry and
last use. A key's token is never stored, and its hash is never shown; the
first characters tell a leaked token's key apart.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		wsID := fs.String("workspace", "", "only the keys of the workspace `ID`")
		return instanceCommand(fs, nil, func(ctx context.Context, in *instance, stdout io.Writer) error {
			keys, err := instanceKeys(ctx, in.store, *wsID)
			if err != nil {
				return err
			}
			now := time.Now()
			rows := make([][]string, 0, len(keys))
			for _, k := range keys {
				rows = append(rows, []string{k.ID, k.WorkspaceID, k.Name, string(k.Scope), k.Start + "…",
					string(k.State(now)), day(k.ExpiresAt), day(k.LastUsedAt)})
			}
			return table(stdout, "ID WORKSPACE NAME SCOPE START STATE EXPIRES LAST_USED", rows)
		})
	},
}

var keysRevokeCommand = &command{
	name:     "keys revoke",
	synopsis: "keys revoke --key ID [--config FILE] [--token TOKEN]",
	summary:  "revoke an API key at once",
	about: `Revoke an API key at once, in whatever workspace it is: for the day a key
leaks and nobody who could revoke it can sign in. Find its ID with
linkbolt keys list (the START column shows the token's first characters).` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		id := fs.String("key", "", "the key's `ID` (required)")
		check := func(context.Context) error {
			if *id == "" {
				return usageError{"--key ID is required"}
			}
			return nil
		}
		return instanceCommand(fs, check, func(ctx context.Context, in *instance, stdout io.Writer) error {
			k, err := findInstanceKey(ctx, in.store, *id)
			if err != nil {
				return err
			}
			if in.api != nil {
				err = in.api.call(ctx, "DELETE", "/v1/admin/workspaces/"+k.WorkspaceID+"/keys/"+k.ID, nil, nil)
			} else {
				err = in.store.Keys.RevokeKey(ctx, k.WorkspaceID, k.ID)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked key %s (%q, %s…) of workspace %s\n", k.ID, k.Name, k.Start, k.WorkspaceID)
			return nil
		})
	},
}

// instanceKeys returns the keys of the workspace wsID, or of every
// workspace when it is "".
func instanceKeys(ctx context.Context, store *link.Store, wsID string) ([]*link.APIKey, error) {
	var list []*link.Workspace
	if wsID != "" {
		ws, err := store.Workspaces.FindWorkspaceByID(ctx, wsID)
		if err != nil {
			return nil, err
		}
		list = []*link.Workspace{ws}
	} else {
		var err error
		if list, err = store.Workspaces.ListWorkspaces(ctx); err != nil {
			return nil, err
		}
	}
	var out []*link.APIKey
	for _, ws := range list {
		keys, err := store.Keys.FindKeys(ctx, ws.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, keys...)
	}
	return out, nil
}

// findInstanceKey finds a key by ID in any workspace. ENOTFOUND.
func findInstanceKey(ctx context.Context, store *link.Store, id string) (*link.APIKey, error) {
	keys, err := instanceKeys(ctx, store, "")
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return nil, link.Errorf(link.ENOTFOUND, "key %q not found (see linkbolt keys list)", id)
}
