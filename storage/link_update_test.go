package storage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestUpdateLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "old", Tags: []string{"a", "b"}})
	mustLink(t, s, ws.ID, &link.Link{Alias: "taken", Tags: []string{"b"}})
	s.Clock.Add(time.Hour)

	// Moving alias and tags.
	got, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{
		Alias: ptr("new"), Tags: ptr([]string{"b", "c", "c"}), DestinationURL: ptr(" https://example.com/new "), RedirectCode: ptr(301),
	}, func(l *link.Link) error { return l.Validate(nil) })
	if err != nil {
		t.Fatal(err)
	}
	if got.Alias != "new" || !slices.Equal(got.Tags, []string{"b", "c"}) || got.DestinationURL != "https://example.com/new" ||
		got.RedirectCode != 301 || !got.UpdatedAt.Equal(t0.Add(time.Hour)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("updated = %+v", got)
	}
	_, err = s.Links.FindLinkByAlias(ctx, "", "old")
	wantCode(t, err, link.ENOTFOUND)
	if byAlias, err := s.Links.FindLinkByAlias(ctx, "", "new"); err != nil || byAlias.ID != l.ID || byAlias.RedirectCode != 301 {
		t.Fatalf("by new alias = %+v, %v", byAlias, err)
	}
	wantTotals(t, s, ws.ID, map[string]int{"": 2, "a": 0, "b": 2, "c": 1})
	mustLink(t, s, ws.ID, &link.Link{Alias: "old"}) // the old alias is free again

	// Failures change nothing.
	before, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
	errBad := errors.New("custom validation")
	for _, tt := range []struct {
		name     string
		ws, id   string
		upd      link.LinkUpdate
		validate func(*link.Link) error
		code     string
		wantErr  error
	}{
		{"alias taken", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("taken"), Tags: ptr([]string{"z"})}, nil, link.ECONFLICT, nil},
		{"validate error unchanged", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("zzz")}, func(*link.Link) error { return errBad }, link.EINTERNAL, errBad},
		{"invalid", ws.ID, l.ID, link.LinkUpdate{DestinationURL: ptr("ftp://x")}, func(l *link.Link) error { return l.Validate(nil) }, link.EINVALID, nil},
		{"other workspace", other.ID, l.ID, link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND, nil},
		{"unknown", ws.ID, "lnk_zzz", link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Links.UpdateLink(ctx, tt.ws, tt.id, tt.upd, tt.validate)
			wantCode(t, err, tt.code)
			if tt.wantErr != nil && err != tt.wantErr {
				t.Fatalf("err = %v, want the validator's own error", err)
			}
			after, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("link changed by a failed update:\n%+v\n%+v", before, after)
			}
		})
	}

	// An empty alias gets a new generated code.
	got, err = s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr("")}, nil)
	if err != nil || len(got.Alias) != link.GeneratedCodeLength {
		t.Fatalf("update to empty alias: %+v, %v", got, err)
	}
	// Keeping the alias is not a conflict with itself.
	if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr(got.Alias), Tags: ptr([]string{})}, nil); err != nil {
		t.Fatal(err)
	}
	wantTotals(t, s, ws.ID, map[string]int{"": 3, "b": 1, "c": 0})
}
