package link_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestErrorCodeAndMessage(t *testing.T) {
	notFound := link.Errorf(link.ENOTFOUND, "link %q not found", "abc")
	invalid := &link.Error{Code: link.EINVALID, Message: "alias: is a reserved word",
		Fields: []link.FieldError{{Field: "alias", Message: "is a reserved word"}}}
	tests := []struct {
		name        string
		err         error
		wantCode    string
		wantMessage string
		wantFields  []link.FieldError
	}{
		{"nil", nil, "", "", nil},
		{"domain error", notFound, link.ENOTFOUND, `link "abc" not found`, nil},
		{"wrapped once", fmt.Errorf("find: %w", notFound), link.ENOTFOUND, `link "abc" not found`, nil},
		{"wrapped twice", fmt.Errorf("handler: %w", fmt.Errorf("find: %w", notFound)), link.ENOTFOUND, `link "abc" not found`, nil},
		{"joined", errors.Join(errors.New("other"), notFound), link.ENOTFOUND, `link "abc" not found`, nil},
		{"validation", invalid, link.EINVALID, "alias: is a reserved word", invalid.Fields},
		{"wrapped validation", fmt.Errorf("create: %w", invalid), link.EINVALID, "alias: is a reserved word", invalid.Fields},
		{"plain error", errors.New("bolt: database not open"), link.EINTERNAL, "Internal error.", nil},
		{"wrapped infrastructure error", fmt.Errorf("open /var/lib/linkbolt/db: %w", os.ErrPermission), link.EINTERNAL, "Internal error.", nil},
		{"io error", io.ErrUnexpectedEOF, link.EINTERNAL, "Internal error.", nil},
		{"context", context.DeadlineExceeded, link.EINTERNAL, "Internal error.", nil},
		{"error not wrapped with %w", fmt.Errorf("find: %v", notFound), link.EINTERNAL, "Internal error.", nil},
		{"every code", link.Errorf(link.ERATELIMITED, "slow down"), link.ERATELIMITED, "slow down", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := link.ErrorCode(tt.err), tt.wantCode; got != want {
				t.Errorf("ErrorCode = %q, want %q", got, want)
			}
			if got, want := link.ErrorMessage(tt.err), tt.wantMessage; got != want {
				t.Errorf("ErrorMessage = %q, want %q", got, want)
			}
			if got, want := link.ErrorFields(tt.err), tt.wantFields; !reflect.DeepEqual(got, want) {
				t.Errorf("ErrorFields = %+v, want %+v", got, want)
			}
		})
	}
}

func TestErrorMessageMasksInternalDetail(t *testing.T) {
	err := fmt.Errorf("write /srv/secret/linkbolt.db: %w", errors.New("disk quota exceeded for user deploy"))
	msg := link.ErrorMessage(err)
	for _, leak := range []string{"/srv/secret", "quota", "deploy", "linkbolt.db"} {
		if strings.Contains(msg, leak) {
			t.Errorf("ErrorMessage = %q, leaks %q", msg, leak)
		}
	}
}

func TestErrorString(t *testing.T) {
	err := link.Errorf(link.ECONFLICT, "alias %q is taken", "launch")
	if got, want := err.Error(), `linkbolt error: code=conflict message=alias "launch" is taken`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if got, want := err.Code, link.ECONFLICT; got != want {
		t.Fatalf("Code = %q, want %q", got, want)
	}
}

// TestHasLinksErrors: the refusals of deleting a campaign or a domain that
// still has links count the links and name them in words.
func TestHasLinksErrors(t *testing.T) {
	tests := []struct {
		err  *link.Error
		want string
	}{
		{link.CampaignHasLinksError("cmp_1", 1), `campaign "cmp_1" still has 1 link: move or delete it, or delete with ?detach=true`},
		{link.CampaignHasLinksError("cmp_1", 2), `campaign "cmp_1" still has 2 links: move or delete them, or delete with ?detach=true`},
		{link.DomainHasLinksError("go.example.com", 1), `the domain go.example.com still has 1 link: delete it (or re-create it on another domain) first`},
		{link.DomainHasLinksError("go.example.com", 3), `the domain go.example.com still has 3 links: delete them (or re-create them on another domain) first`},
	}
	for _, tt := range tests {
		if got, want := tt.err.Code, link.ECONFLICT; got != want {
			t.Errorf("%q: code %q, want %q", tt.err.Message, got, want)
		}
		if got, want := tt.err.Message, tt.want; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	}
}
