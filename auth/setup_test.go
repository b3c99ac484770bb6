package auth_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestSetup_Bootstrap creates the instance admin on a real data file: the
// password is stored hashed, the first workspace takes the default plan
// and the name "Default" when none is given, and a second setup is
// refused.
func TestSetup_Bootstrap(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	db := storage.NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	db.Now = func() time.Time { return now }
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	users := storage.NewUserService(db)
	setup := &auth.Setup{Users: users, Passwords: auth.Passwords{Cost: bcrypt.MinCost}, Plan: link.PlanPro,
		Now: func() time.Time { return now }}
	ctx := context.Background()

	for _, tt := range []struct{ email, password string }{
		{"not an address", "a long password"},
		{"a@example.com", "short"},
		{"a@example.com", "Qwertyuiop"}, // a common password
	} {
		if _, err := setup.Bootstrap(ctx, tt.email, tt.password, ""); link.ErrorCode(err) != link.EINVALID {
			t.Fatalf("Bootstrap(%q, %q) = %v, want EINVALID", tt.email, tt.password, err)
		}
	}
	if n, err := users.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("%d users after refused setups, %v", n, err)
	}

	u, err := setup.Bootstrap(ctx, "Admin@Example.com", "a long password", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !u.Admin || u.Email != "admin@example.com" || !u.CreatedAt.Equal(now) || string(u.PasswordHash) == "a long password" {
		t.Fatalf("admin = %+v", u)
	}
	if !setup.Passwords.Verify(u.PasswordHash, "a long password") {
		t.Fatal("the stored hash does not verify")
	}
	got, err := users.FindUserByEmail(ctx, "admin@example.com")
	if err != nil || got.ID != u.ID || !got.Admin {
		t.Fatalf("stored admin = %+v, %v", got, err)
	}
	wss, err := storage.NewWorkspaceService(db).FindMemberships(ctx, u.ID)
	if err != nil || len(wss) != 1 || wss[0].Workspace.Name != "Default" || wss[0].Workspace.Plan != link.PlanPro || wss[0].Role != link.RoleOwner {
		t.Fatalf("workspaces = %+v, %v", wss, err)
	}

	if _, err := setup.Bootstrap(ctx, "b@example.com", "another long password", "Second"); link.ErrorCode(err) != link.ECONFLICT {
		t.Fatalf("second setup: %v, want ECONFLICT", err)
	}
}
