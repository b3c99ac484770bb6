package importer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// handedOver is what a source handed over to Each's function.
type handedOver struct {
	links  []Link
	errors []RowError
}

// collect runs src.Each and keeps what it hands over.
func collect(t *testing.T, src Source) (handedOver, error) {
	t.Helper()
	var got handedOver
	err := src.Each(context.Background(), func(l Link, rowErr *RowError) error {
		if rowErr != nil {
			got.errors = append(got.errors, *rowErr)
			return nil
		}
		got.links = append(got.links, l)
		return nil
	})
	return got, err
}

// keys lists the links' keys in order.
func (h handedOver) keys() string {
	var ks []string
	for _, l := range h.links {
		ks = append(ks, l.Key)
	}
	return strings.Join(ks, " ")
}

// requestLog counts the requests a fake API answered, by path and query.
type requestLog struct {
	mu   sync.Mutex
	seen map[string]int
}

func (r *requestLog) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]int{}
	}
	r.seen[s]++
}

func (r *requestLog) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[s]
}

// checkSourceError checks that err stops the source with a message about
// field that names want and never holds the API key.
func checkSourceError(t *testing.T, err error, field, want, key string) {
	t.Helper()
	if err == nil {
		t.Fatal("Each: no error")
	}
	if strings.Contains(err.Error(), key) || strings.Contains(link.ErrorMessage(err), key) {
		t.Fatalf("the error holds the API key: %v", err)
	}
	if got := link.ErrorCode(err); got != link.EINVALID {
		t.Fatalf("error code = %q, want %q (%v)", got, link.EINVALID, err)
	}
	fields := link.ErrorFields(err)
	if len(fields) != 1 || fields[0].Field != field || !strings.Contains(fields[0].Message, want) {
		t.Fatalf("error fields = %+v, want %s: …%s…", fields, field, want)
	}
}

// linkFields names the fields err finds fault with.
func linkFields(err error) []string {
	var names []string
	for _, f := range link.ErrorFields(err) {
		names = append(names, f.Field)
	}
	return names
}

// checkStopped checks that err says the source stopped answering (a plain
// error, which the import reports beside what it read), naming want and
// never the API key.
func checkStopped(t *testing.T, err error, want, key string) {
	t.Helper()
	if err == nil {
		t.Fatal("Each: no error")
	}
	if code := link.ErrorCode(err); code != link.EINTERNAL {
		t.Fatalf("error code = %q, want a plain error (%v)", code, err)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), key) {
		t.Fatalf("error = %v, want …%s… and not the key", err, want)
	}
}

// TestSetCreatedAt: a creation date from Kutt's or Shlink's API is read as
// ISO 8601 into the link, in UTC; "" leaves it unset; anything else is the
// link's row error, naming the source's field.
func TestSetCreatedAt(t *testing.T) {
	l := Link{Where: "short URL abc"}
	if rowErr := setCreatedAt(&l, "dateCreated", ""); rowErr != nil || !l.CreatedAt.IsZero() {
		t.Fatalf("empty: %v, %v", rowErr, l.CreatedAt)
	}
	if rowErr := setCreatedAt(&l, "dateCreated", "2024-01-02T03:04:05+02:00"); rowErr != nil ||
		l.CreatedAt != time.Date(2024, 1, 2, 1, 4, 5, 0, time.UTC) {
		t.Fatalf("ISO 8601: %v, %v", rowErr, l.CreatedAt)
	}
	rowErr := setCreatedAt(&l, "created_at", "yesterday")
	if rowErr == nil || rowErr.Where != "short URL abc" || rowErr.Reason != `created_at "yesterday" is not an ISO 8601 date` {
		t.Fatalf("not a date: %+v", rowErr)
	}
}
