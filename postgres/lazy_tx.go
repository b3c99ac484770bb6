package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lazyTx is a transaction whose BEGIN goes out in one round trip with its
// first statement (or batch of statements: pgx's Batch.BeginTx), instead
// of one of its own as pgx.BeginFunc sends it: a write of two statements
// and a commit takes three round trips, not four. Every transaction of
// db.tx and db.view is one: at the rates linkbolt creates links, a round
// trip costs both processes more than most statements do. Once begun, it
// is pgx's transaction (real).
//
// The transaction keeps its connection for its whole life and gives it
// back to the pool at the end (runTx); a connection left inside a
// transaction (a failed commit or rollback) is closed by the pool.
type lazyTx struct {
	conn *pgxpool.Conn
	opts pgx.TxOptions
	real pgx.Tx // nil until BEGIN is sent
	done bool   // committed or rolled back before BEGIN was sent
	// committed is set by commitWith: the transaction is over, and real
	// is not to be used again.
	committed bool
}

var _ pgx.Tx = (*lazyTx)(nil)

// errNested answers Begin on a lazyTx: the store nests no transactions.
var errNested = errors.New("postgres: nested transactions are not used")

// runTx runs fn in a transaction with opts on a connection of the pool,
// and commits it unless fn fails (then it rolls back, and returns fn's
// error).
func runTx(ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions, fn func(tx pgx.Tx) error) (err error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	tx := &lazyTx{conn: c, opts: opts}
	defer c.Release() // after the rollback below
	// Rolled back unless committed, also when fn panics (a rollback
	// after the commit does nothing), as pgx.BeginFunc does.
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// commitWith sends sql with args, then COMMIT, in one round trip (with
// BEGIN too when nothing was sent yet): the last write of a transaction
// and its commit cost one round trip, not two. An error of the statement
// leaves the transaction aborted (PostgreSQL skips the rest of a
// pipeline after an error, so COMMIT does not run) for runTx to roll
// back. After it, Commit does nothing.
func (tx *lazyTx) commitWith(ctx context.Context, sql string, args ...any) error {
	if tx.done || tx.committed {
		return pgx.ErrTxClosed
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	br := tx.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	tx.committed = true
	return nil
}

// ensureBegun sends BEGIN alone, for what cannot go in a batch (COPY).
func (tx *lazyTx) ensureBegun(ctx context.Context) error {
	if tx.real != nil {
		return nil
	}
	if tx.done {
		return pgx.ErrTxClosed
	}
	real, err := tx.conn.BeginTx(ctx, tx.opts)
	if err != nil {
		return err
	}
	tx.real = real
	return nil
}

func (tx *lazyTx) Begin(context.Context) (pgx.Tx, error) { return nil, errNested }

// Commit commits the transaction; one that sent nothing has nothing to
// commit.
func (tx *lazyTx) Commit(ctx context.Context) error {
	if tx.committed {
		return nil
	}
	if tx.real != nil {
		return tx.real.Commit(ctx)
	}
	if tx.done {
		return pgx.ErrTxClosed
	}
	tx.done = true
	return nil
}

// Rollback rolls the transaction back; one that sent nothing has
// nothing to roll back.
func (tx *lazyTx) Rollback(ctx context.Context) error {
	if tx.committed {
		return pgx.ErrTxClosed
	}
	if tx.real != nil {
		return tx.real.Rollback(ctx)
	}
	if tx.done {
		return pgx.ErrTxClosed
	}
	tx.done = true
	return nil
}

func (tx *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if tx.committed {
		return 0, pgx.ErrTxClosed
	}
	if err := tx.ensureBegun(ctx); err != nil {
		return 0, err
	}
	return tx.real.CopyFrom(ctx, table, columns, src)
}

// LargeObjects is not used by the store (it would need a context to
// begin the transaction).
func (tx *lazyTx) LargeObjects() pgx.LargeObjects {
	panic("postgres: large objects are not used")
}

func (tx *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return tx.conn.Conn().Prepare(ctx, name, sql)
}

func (tx *lazyTx) Conn() *pgx.Conn { return tx.conn.Conn() }

func (tx *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if tx.committed {
		return failedBatch{pgx.ErrTxClosed}
	}
	if tx.real != nil {
		return tx.real.SendBatch(ctx, b)
	}
	if tx.done {
		return failedBatch{pgx.ErrTxClosed}
	}
	nb := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(b.QueuedQueries)+1)}
	nb.BeginTx(tx.opts)
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	br := tx.conn.SendBatch(ctx, nb)
	tx.real = br.Tx()
	if _, err := br.Exec(); err != nil { // BEGIN's result
		_ = br.Close()
		return failedBatch{fmt.Errorf("begin: %w", err)}
	}
	return br
}

// queryOptions reports whether args begin with an option of pgx's
// Query (an execution mode, result formats) that a batch does not take:
// such a statement goes after a BEGIN of its own.
func queryOptions(args []any) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0].(type) {
	case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
		return true
	}
	return false
}

func (tx *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if tx.committed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	// pgx sends an Exec without arguments by the simple protocol, which
	// takes several statements in one string; a batch would not.
	if tx.real == nil && (len(args) == 0 || queryOptions(args)) {
		if err := tx.ensureBegun(ctx); err != nil {
			return pgconn.CommandTag{}, err
		}
	}
	if tx.real != nil {
		return tx.real.Exec(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := tx.SendBatch(ctx, b)
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (tx *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if tx.committed {
		return nil, pgx.ErrTxClosed
	}
	if tx.real == nil && queryOptions(args) {
		if err := tx.ensureBegun(ctx); err != nil {
			return nil, err
		}
	}
	if tx.real != nil {
		return tx.real.Query(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	br := tx.SendBatch(ctx, b)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return rows, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (tx *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := tx.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// batchRows are the rows of a batch of one query: closing them closes
// the batch.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.Rows.Err()
	if err := r.br.Close(); r.err == nil {
		r.err = err
	}
}

func (r *batchRows) Err() error {
	if r.closed {
		return r.err
	}
	return r.Rows.Err()
}

// firstRow is pgx's QueryRow over rows: the first row, or
// pgx.ErrNoRows.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// failedBatch answers every result of a batch whose BEGIN failed with
// that error.
type failedBatch struct{ err error }

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return &firstRow{err: f.err} }
func (f failedBatch) Close() error                     { return f.err }
func (f failedBatch) Tx() pgx.Tx                       { return nil }
