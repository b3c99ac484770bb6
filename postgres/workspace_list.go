package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// ListWorkspaces returns every workspace of the instance, oldest first,
// for linkbolt workspaces list and keys list.
func (s *WorkspaceService) ListWorkspaces(ctx context.Context) ([]*link.Workspace, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*link.Workspace, error) { return scanWorkspace(row) })
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	return out, nil
}

// CountLinks returns the number of links of the workspace id (archived
// ones included). ENOTFOUND.
func (s *WorkspaceService) CountLinks(ctx context.Context, id string) (int, error) {
	if !s.db.validID(link.PrefixWorkspace, id) {
		return 0, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	var n int
	err := s.db.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM links WHERE workspace_id = w.id) FROM workspaces w WHERE w.id = $1`, id).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	} else if err != nil {
		return 0, fmt.Errorf("count links of %s: %w", id, err)
	}
	return n, nil
}
