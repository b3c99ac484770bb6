package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkbolt/linkbolt/link"
)

// The limits linkbolt's connections get unless the URL sets its own.
const (
	// DefaultConnectTimeout bounds a connection attempt (libpq's
	// connect_timeout), so that a database host that does not answer
	// fails start-up, and a request, instead of hanging.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultStatementTimeout bounds each statement on the server
	// (statement_timeout): a query stuck behind a lock or a runaway plan
	// is cancelled and answered 503 instead of holding a connection.
	DefaultStatementTimeout = 30 * time.Second
)

// poolConfig parses the URL u and gives it linkbolt's defaults: the
// connect timeout and the statement timeout, unless u (or libpq's
// PGCONNECT_TIMEOUT and PGOPTIONS) sets them.
func poolConfig(u string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, err
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 && !strings.Contains(u, "connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		cc.ConnectTimeout = DefaultConnectTimeout
	}
	_, set := cc.RuntimeParams["statement_timeout"]
	if !set && !strings.Contains(cc.RuntimeParams["options"], "statement_timeout") && !strings.Contains(os.Getenv("PGOPTIONS"), "statement_timeout") {
		cc.RuntimeParams["statement_timeout"] = DefaultStatementTimeout.String()
	}
	return cfg, nil
}

// Reasons the store gives for answering 503 (see Unavailable).
const (
	reasonUnreachable = "the database cannot be reached"
	reasonTimeout     = "a database statement ran past its statement_timeout"
	reasonDiskFull    = "the database server is out of disk space: changes cannot be saved"
	reasonResources   = "the database server is out of resources (memory or connections)"
	reasonReadOnly    = "the database accepts no changes (it is read-only, or a standby)"
	reasonLock        = "a database lock was held for too long"
)

// Unavailable reports whether err, from one of the store's services,
// says the database cannot serve for now rather than that the request is
// at fault, and why: the server answers such errors 503 with Retry-After.
func (db *DB) Unavailable(err error) (string, bool) { return unavailable(err) }

func unavailable(err error) (string, bool) {
	if err == nil || link.ErrorCode(err) != link.EINTERNAL || errors.Is(err, context.Canceled) {
		return "", false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100":
			return reasonDiskFull, true
		case strings.HasPrefix(pe.Code, "53"):
			return reasonResources, true
		case pe.Code == "57014":
			return reasonTimeout, true
		case pe.Code == "25006":
			return reasonReadOnly, true
		case pe.Code == "55P03":
			return reasonLock, true
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"):
			return reasonUnreachable, true // connection exceptions, shutdowns
		}
		return "", false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return reasonUnreachable, true
	}
	return "", false
}

// openError is the error of a failed start on the database of the URL u
// (redacted for the message): one line, without the password, saying
// what to do. linkbolt does not retry at start: a wrong password or a
// foreign database will not mend, and for a database not up yet the
// service manager restarts linkbolt (deploy/linkbolt.service).
func openError(redacted string, err error, u string) error {
	msg := strings.ReplaceAll(redactErr(err, u), "\n\t", "; ")
	msg = strings.ReplaceAll(msg, "\n", "; ")
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000"):
		msg += " (check the user and password of storage.postgres_url)"
	case errors.As(err, &pe) && pe.Code == "3D000":
		msg += " (create the database, or fix its name in storage.postgres_url)"
	default:
		if _, down := unavailable(err); down {
			msg += " (linkbolt does not retry at start: it exits, to be started again, as its service manager does, once the database answers)"
		}
	}
	return fmt.Errorf("postgres %s: %s", redacted, msg)
}
