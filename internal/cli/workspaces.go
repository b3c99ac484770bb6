package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/linkbolt/linkbolt/link"
)

var workspacesListCommand = &command{
	name:     "workspaces list",
	synopsis: "workspaces list [--config FILE] [--token TOKEN]",
	summary:  "list every workspace with its plan and links",
	about:    "List every workspace of the instance: ID, name, plan, number of links." + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		return instanceCommand(fs, nil, func(ctx context.Context, in *instance, stdout io.Writer) error {
			wss := in.store.Workspaces
			list, err := wss.ListWorkspaces(ctx)
			if err != nil {
				return err
			}
			rows := make([][]string, 0, len(list))
			for _, ws := range list {
				n, err := wss.CountLinks(ctx, ws.ID)
				if err != nil {
					return err
				}
				rows = append(rows, []string{ws.ID, ws.Name, string(ws.Plan), strconv.Itoa(n), day(&ws.CreatedAt)})
			}
			return table(stdout, "ID NAME PLAN LINKS CREATED", rows)
		})
	},
}

var workspacesSetPlanCommand = &command{
	name:     "workspaces set-plan",
	synopsis: "workspaces set-plan --workspace ID --plan free|pro|enterprise [--config FILE] [--token TOKEN]",
	summary:  "change a workspace's plan (its API rate limit)",
	about: `Change a workspace's plan: free, pro or enterprise, whose API rate limits
are rate_limit.plans in the configuration. It applies from the workspace's
next request.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		id := fs.String("workspace", "", "the workspace's `ID` (required; see linkbolt workspaces list)")
		plan := fs.String("plan", "", "the new `PLAN`: free, pro or enterprise (required)")
		check := func(context.Context) error {
			if *id == "" {
				return usageError{"--workspace ID is required"}
			}
			if !link.Plan(*plan).Valid() {
				return usageError{fmt.Sprintf("--plan %q: want free, pro or enterprise", *plan)}
			}
			return nil
		}
		return instanceCommand(fs, check, func(ctx context.Context, in *instance, stdout io.Writer) error {
			p := link.Plan(*plan)
			ws, err := in.store.Workspaces.FindWorkspaceByID(ctx, *id)
			if err != nil {
				return err
			}
			if in.api != nil {
				err = in.api.call(ctx, "PATCH", "/v1/workspaces/"+ws.ID, map[string]string{"plan": string(p)}, nil)
			} else {
				_, err = in.store.Workspaces.UpdateWorkspace(ctx, ws.ID, link.WorkspaceUpdate{Plan: &p})
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "workspace %s (%s): plan %s, was %s\n", ws.Name, ws.ID, p, ws.Plan)
			return nil
		})
	},
}
