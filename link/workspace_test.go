package link_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestScopeAllows(t *testing.T) {
	tests := []struct {
		have, need link.Scope
		want       bool
	}{
		{link.ScopeRead, link.ScopeRead, true},
		{link.ScopeRead, link.ScopeReadWrite, false},
		{link.ScopeReadWrite, link.ScopeRead, true},
		{link.ScopeReadWrite, link.ScopeReadWrite, true},
		{"", link.ScopeRead, false},
		{"", link.ScopeReadWrite, false},
		{"admin", link.ScopeRead, false},
		{"admin", link.ScopeReadWrite, false},
		{"READ", link.ScopeRead, false},
	}
	for _, tt := range tests {
		if got, want := tt.have.Allows(tt.need), tt.want; got != want {
			t.Errorf("Scope(%q).Allows(%q) = %v, want %v", tt.have, tt.need, got, want)
		}
	}
}

func TestScopeValid(t *testing.T) {
	for s, want := range map[link.Scope]bool{link.ScopeRead: true, link.ScopeReadWrite: true, "": false, "owner": false, "Read": false} {
		if got := s.Valid(); got != want {
			t.Errorf("Scope(%q).Valid() = %v, want %v", s, got, want)
		}
	}
}

func TestRoleScope(t *testing.T) {
	tests := []struct {
		role link.Role
		want link.Scope
	}{
		{link.RoleOwner, link.ScopeReadWrite},
		{link.RoleReadWrite, link.ScopeReadWrite},
		{link.RoleRead, link.ScopeRead},
		{"", link.ScopeRead},
		{"Owner", link.ScopeRead},
		{"admin", link.ScopeRead},
	}
	for _, tt := range tests {
		if got, want := tt.role.Scope(), tt.want; got != want {
			t.Errorf("Role(%q).Scope() = %q, want %q", tt.role, got, want)
		}
	}
}

func TestRoleAndPlanValid(t *testing.T) {
	for r, want := range map[link.Role]bool{link.RoleRead: true, link.RoleReadWrite: true, link.RoleOwner: true, "": false, "admin": false} {
		if got := r.Valid(); got != want {
			t.Errorf("Role(%q).Valid() = %v, want %v", r, got, want)
		}
	}
	for p, want := range map[link.Plan]bool{link.PlanFree: true, link.PlanPro: true, link.PlanEnterprise: true, "": false, "Pro": false} {
		if got := p.Valid(); got != want {
			t.Errorf("Plan(%q).Valid() = %v, want %v", p, got, want)
		}
	}
}

func TestWorkspaceValidate(t *testing.T) {
	tests := []struct {
		name     string
		ws       link.Workspace
		want     []string
		wantName string
	}{
		{"valid", link.Workspace{Name: "Acme", Plan: link.PlanFree}, nil, "Acme"},
		{"trimmed", link.Workspace{Name: "  Acme Inc \n", Plan: link.PlanPro}, nil, "Acme Inc"},
		{"100 characters", link.Workspace{Name: strings.Repeat("ß", 100), Plan: link.PlanEnterprise}, nil, strings.Repeat("ß", 100)},
		{"no name", link.Workspace{Plan: link.PlanFree}, []string{"name"}, ""},
		{"101 characters", link.Workspace{Name: strings.Repeat("x", 101), Plan: link.PlanFree}, []string{"name"}, strings.Repeat("x", 101)},
		{"control character", link.Workspace{Name: "Ac\x1bme", Plan: link.PlanFree}, []string{"name"}, "Ac\x1bme"},
		{"no plan", link.Workspace{Name: "Acme"}, []string{"plan"}, "Acme"},
		{"unknown plan", link.Workspace{Name: "Acme", Plan: "gold"}, []string{"plan"}, "Acme"},
		{"both", link.Workspace{Name: " ", Plan: "gold"}, []string{"name", "plan"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := tt.ws
			err := ws.Validate()
			if got, want := fieldNames(err), tt.want; !reflect.DeepEqual(got, want) {
				t.Fatalf("fields %q, want %q (err %v)", got, want, err)
			}
			if err != nil {
				if got, want := link.ErrorCode(err), link.EINVALID; got != want {
					t.Fatalf("ErrorCode = %q, want %q", got, want)
				}
			}
			if got, want := ws.Name, tt.wantName; got != want {
				t.Fatalf("Name = %q, want %q", got, want)
			}
		})
	}
}
