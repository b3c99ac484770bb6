package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A finished test's database goes to the next test as a new copy of the
// template would be: the template's rows, its sequences where they were;
// one whose objects a test changed is not used again.
func TestURLFromRecycles(t *testing.T) {
	ctx := context.Background()
	prepare := func(u string) error {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `CREATE TABLE things (id bigint GENERATED ALWAYS AS IDENTITY, name text);
			CREATE SEQUENCE ids; INSERT INTO things (name) VALUES ('seed')`)
		return err
	}
	var first string
	use := func(t *testing.T, change string) (url string, rows int64, next int64) {
		url = URLFrom(t, "recycle", prepare)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM things`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `SELECT nextval('ids')`).Scan(&next); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO things (name) VALUES ('a'), ('b'); SELECT nextval('ids')`); err != nil {
			t.Fatal(err)
		}
		if change != "" {
			if _, err := conn.Exec(ctx, change); err != nil {
				t.Fatal(err)
			}
		}
		return url, rows, next
	}
	t.Run("first", func(t *testing.T) {
		var rows, next int64
		first, rows, next = use(t, "")
		if rows != 1 || next != 1 {
			t.Fatalf("a new copy: %d rows, next id %d", rows, next)
		}
	})
	t.Run("recycled", func(t *testing.T) {
		u, rows, next := use(t, "CREATE TABLE extra (x int)")
		if u != first {
			t.Fatalf("the finished test's database was not taken again: %s, then %s", first, u)
		}
		if rows != 1 || next != 1 {
			t.Fatalf("a recycled database: %d rows, next id %d", rows, next)
		}
	})
	t.Run("changed objects", func(t *testing.T) {
		if u, rows, next := use(t, ""); u == first || rows != 1 || next != 1 {
			t.Fatalf("after a test made a table: %s (%d rows, next %d), the changed one was %s", u, rows, next, first)
		}
	})
}
