package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// TestLazyTx: a transaction whose BEGIN goes out with its first
// statement behaves as pgx's own, whatever that first statement is: a
// row, rows, a batch, an exec or a COPY; a rollback undoes it all; a
// failed statement fails the commit and leaves the connection usable; a
// transaction that sent nothing commits nothing; a read-only one refuses
// writes. Each runs on a pool of one connection, so a connection left
// inside a transaction would show in the next one.
func TestLazyTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, count := onePool(t)
	var err error
	inTx := func(tx pgx.Tx) {
		t.Helper()
		var in bool
		if err := tx.QueryRow(ctx, `SELECT now() <> statement_timestamp()`).Scan(&in); err != nil || !in {
			t.Fatalf("not inside a transaction: %v, %v", in, err)
		}
	}
	insert := func(tx pgx.Tx, n int) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ($1)`, n)
		return err
	}
	errUndo := errors.New("undo")

	// First a row, then a rollback.
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil || one != 1 {
			t.Fatalf("QueryRow first: %d, %v", one, err)
		}
		if err := tx.QueryRow(ctx, `SELECT 1 WHERE false`).Scan(&one); !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("no row: %v", err)
		}
		inTx(tx)
		if err := insert(tx, 1); err != nil {
			t.Fatal(err)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) || count() != 0 {
		t.Fatalf("rolled back: %v, %d rows", err, count())
	}

	// First rows, then a commit.
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT generate_series(1, 3)`)
		if err != nil {
			t.Fatal(err)
		}
		ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil || len(ns) != 3 {
			t.Fatalf("Query first: %v, %v", ns, err)
		}
		inTx(tx)
		return insert(tx, 2)
	})
	if err != nil || count() != 1 {
		t.Fatalf("committed: %v, %d rows", err, count())
	}

	// First a batch, then a COPY; an exec first; a COPY first.
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO t VALUES (3)`)
		b.Queue(`SELECT count(*) FROM t`)
		br := tx.SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := br.QueryRow().Scan(&n); err != nil || n != 2 {
			t.Fatalf("batch first: %d, %v", n, err)
		}
		if err := br.Close(); err != nil {
			t.Fatal(err)
		}
		inTx(tx)
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"n"}, pgx.CopyFromRows([][]any{{4}, {5}}))
		return err
	})
	if err != nil || count() != 4 {
		t.Fatalf("batch and copy: %v, %d rows", err, count())
	}
	if err := runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return insert(tx, 6) }); err != nil || count() != 5 {
		t.Fatalf("exec first: %v, %d rows", err, count())
	}
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"n"}, pgx.CopyFromRows([][]any{{7}})); err != nil {
			t.Fatal(err)
		}
		inTx(tx)
		return errUndo
	})
	if !errors.Is(err, errUndo) || count() != 5 {
		t.Fatalf("copy first, rolled back: %v, %d rows", err, count())
	}

	// A failed statement in the first batch: nothing is written, the
	// commit fails, the connection serves the next transaction.
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO t VALUES (8)`)
		b.Queue(`INSERT INTO t VALUES (2)`) // a duplicate key
		if err := tx.SendBatch(ctx, b).Close(); err == nil {
			t.Fatal("a batch with a duplicate key succeeded")
		}
		return nil // commit anyway
	})
	if err == nil || count() != 5 {
		t.Fatalf("commit after a failed statement: %v, %d rows", err, count())
	}
	if err := runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return insert(tx, 2) }); err == nil || count() != 5 {
		t.Fatalf("a failed exec first: %v, %d rows", err, count())
	}

	// Nothing sent: nothing to commit or roll back.
	if err := runTx(ctx, pool, pgx.TxOptions{}, func(pgx.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := runTx(ctx, pool, pgx.TxOptions{}, func(pgx.Tx) error { return errUndo }); !errors.Is(err, errUndo) {
		t.Fatal(err)
	}

	// A statement with an option of pgx's Query first (an execution
	// mode, which a batch does not take).
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT $1::int`, pgx.QueryExecModeExec, 7).Scan(&n); err != nil || n != 7 {
			t.Fatalf("an execution mode first: %d, %v", n, err)
		}
		inTx(tx)
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES ($1)`, pgx.QueryExecModeExec, 8)
		return err
	})
	if err != nil || count() != 6 {
		t.Fatalf("statements with an execution mode: %v, %d rows", err, count())
	}

	// Several statements in one Exec without arguments, first: pgx's
	// simple protocol, as in its own transaction.
	err = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (20); INSERT INTO t VALUES (21)`); err != nil {
			t.Fatal(err)
		}
		inTx(tx)
		return errUndo
	})
	if !errors.Is(err, errUndo) || count() != 6 {
		t.Fatalf("several statements first, rolled back: %v, %d rows", err, count())
	}

	// A panic in the transaction rolls it back.
	func() {
		defer func() { _ = recover() }()
		_ = runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if err := insert(tx, 30); err != nil {
				t.Fatal(err)
			}
			panic("in the transaction")
		})
	}()
	if count() != 6 {
		t.Fatalf("after a panic: %d rows", count())
	}

	// Read only.
	err = runTx(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error { return insert(tx, 9) })
	if err == nil || count() != 6 {
		t.Fatalf("a write in a read-only transaction: %v, %d rows", err, count())
	}
	if s := pool.Stat(); s.TotalConns() != 1 || s.AcquiredConns() != 0 {
		t.Fatalf("pool after the transactions: %d connections, %d acquired", s.TotalConns(), s.AcquiredConns())
	}
}

// TestLastWriteWithCommit: a write held back to go out with the commit
// (execAtCommit) is committed with the transaction, whether or not
// anything was sent before it; its failure undoes the whole transaction
// and reaches the caller as mapErr makes it; a statement after it sends
// it first, so that it sees it; a transaction that fails before its
// commit never sends it. The connection serves the next transaction.
func TestLastWriteWithCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, count := onePool(t)
	var err error
	errTaken := errors.New("taken")
	taken := func(err error) error {
		if isUnique(err, "") {
			return errTaken
		}
		return err
	}
	// run is db.tx's way with a writeTx over runTx.
	run := func(fn func(w *writeTx) error) error {
		return runTx(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			w := &writeTx{Tx: tx}
			if err := fn(w); err != nil {
				return err
			}
			if err := w.beforeCommit(ctx); err != nil {
				return err
			}
			return w.commit(ctx)
		})
	}
	last := func(w *writeTx, n int) error {
		return w.execAtCommit(ctx, taken, `INSERT INTO t VALUES ($1)`, n)
	}

	// Alone: BEGIN, the write and COMMIT in one round trip.
	if err := run(func(w *writeTx) error { return last(w, 1) }); err != nil || count() != 1 {
		t.Fatalf("the last write alone: %v, %d rows", err, count())
	}
	// After a write of its own.
	err = run(func(w *writeTx) error {
		if _, err := w.Exec(ctx, `INSERT INTO t VALUES (2)`); err != nil {
			t.Fatal(err)
		}
		return last(w, 3)
	})
	if err != nil || count() != 3 {
		t.Fatalf("the last write after another: %v, %d rows", err, count())
	}
	// Refused: the transaction's earlier write is undone too, and the
	// caller gets mapErr's error.
	err = run(func(w *writeTx) error {
		if _, err := w.Exec(ctx, `INSERT INTO t VALUES (4)`); err != nil {
			t.Fatal(err)
		}
		return last(w, 1)
	})
	if !errors.Is(err, errTaken) || count() != 3 {
		t.Fatalf("a refused last write: %v, %d rows", err, count())
	}
	if err := run(func(w *writeTx) error { return last(w, 2) }); !errors.Is(err, errTaken) || count() != 3 {
		t.Fatalf("a refused last write alone: %v, %d rows", err, count())
	}
	// A read after it sees it; a later refusal undoes it.
	err = run(func(w *writeTx) error {
		if err := last(w, 5); err != nil {
			return err
		}
		var n int
		if err := w.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 4 {
			t.Fatalf("a read after the held write: %d, %v", n, err)
		}
		return last(w, 1)
	})
	if !errors.Is(err, errTaken) || count() != 3 {
		t.Fatalf("a held write followed by a refused one: %v, %d rows", err, count())
	}
	// A transaction that fails before its commit never sends it.
	errUndo := errors.New("undo")
	err = run(func(w *writeTx) error {
		if err := last(w, 6); err != nil {
			return err
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) || count() != 3 {
		t.Fatalf("a held write of a failed transaction: %v, %d rows", err, count())
	}
	if err := run(func(w *writeTx) error { return last(w, 7) }); err != nil || count() != 4 {
		t.Fatalf("after the failures: %v, %d rows", err, count())
	}
	if s := pool.Stat(); s.TotalConns() != 1 || s.AcquiredConns() != 0 {
		t.Fatalf("pool after the transactions: %d connections, %d acquired", s.TotalConns(), s.AcquiredConns())
	}
}

// onePool is a pool of one connection to a database of its own with a
// table t of numbers, and a count of t's rows: a connection left inside a
// transaction would show in the next one.
func onePool(t *testing.T) (*pgxpool.Pool, func() int) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, `CREATE TABLE t (n int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return pool, func() (n int) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}
