// Package storetest is the conformance suite of linkbolt's stores: black-box
// tests, written against link.Store and the link service interfaces only,
// of the contract each interface's doc comments state. It covers accounts
// (users, workspaces, sessions), members and invitations, API keys, links
// (aliases and their holds, updates, lists, limits), clicks and their
// analytics, the click backlog, campaigns, QR designs, custom domains,
// webhooks and their outbox, the audit log, the blocklist, imports, the
// certificate store and the data as a whole (ping, JWT secret, backup,
// close and reopen). Every subtest opens a store of its own, so they run
// in parallel. A store runs the suite from a test of its own package by
// calling Run with an Opener that opens a new, empty store with the
// suite's Config (its clock, its webhook event encoder and its alias
// hold) and can open the same data again after a Data.Close, as a restart
// does (storage.TestConformance is the example); the engine-specific
// tests (pages, codecs, SQL plans) stay with the engine.
package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
)

// Config is what the suite asks of a store it opens.
type Config struct {
	// Now is the store's clock: every time the store stamps (CreatedAt,
	// an audit entry's Time) or compares (an invitation's expiry, an
	// alias hold's end) on its own is read from it. The suite moves it
	// instead of sleeping.
	Now func() time.Time
	// Events encodes the webhook events that changes write in their own
	// transaction (link, campaign and click events).
	Events link.EventEncoder
	// AliasHold is how long the alias of a deleted or renamed link stays
	// held for its workspace (links.alias_hold).
	AliasHold time.Duration
}

// Opener opens a new, empty store configured by c for one subtest and
// closes it when t ends. reopen opens the same data again, with the same
// Config, after the suite has closed the store with Data.Close, as a
// restart does; the store it returns is closed when t ends too.
type Opener func(t *testing.T, c Config) (s *link.Store, reopen func() *link.Store)

// aliasHold is the stores' alias hold: short, so that a test can see it end.
const aliasHold = 24 * time.Hour

// t0 is where every subtest's clock starts: a whole UTC hour.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Traits are what a store does by design in its own way, where the
// contract allows more than one: the suite asserts each store's way.
type Traits struct {
	// BackupTool is, for a store kept by a database server that is backed
	// up with its own tool, that tool ("pg_dump"): SpoolBackup refuses
	// with ECONFLICT and a message naming it. "" for a store that spools
	// a copy of its data file.
	BackupTool string
}

// Run runs the conformance suite against the stores open opens: every
// group, or only the groups named in only ("Accounts", "Certs", …) for a
// store that provides only some services yet. An entry "Group/Test" runs
// that one test of its group, for a test that needs a service the store
// does not provide yet. The stores spool backups of their data file (see
// RunStore).
func Run(t *testing.T, open Opener, only ...string) {
	RunStore(t, open, Traits{}, only...)
}

// RunStore is Run for a store of the given traits: the tests of a trait
// run in the form for the store's way (see backupTests).
func RunStore(t *testing.T, open Opener, traits Traits, only ...string) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Accounts", accountTests},
		{"Members", memberTests},
		{"Invitations", invitationTests},
		{"Keys", keyTests},
		{"Links", linkTests},
		{"LinkChecks", linkCheckTests},
		{"Clicks", clickTests},
		{"Campaigns", campaignTests},
		{"QRCodes", qrTests},
		{"UTMTemplates", utmTests},
		{"Tags", tagTests},
		{"BulkEdits", bulkEditTests},
		{"AbuseReports", abuseTests},
		{"OrphanVisits", orphanTests},
		{"Domains", domainTests},
		{"Webhooks", webhookTests},
		{"Audit", auditTests},
		{"Blocklist", blocklistTests},
		{"Imports", importTests},
		{"Certs", certTests},
		{"Data", dataTests},
	}
	for _, g := range groups {
		whole := len(only) == 0 || slices.Contains(only, g.name)
		if !whole && !slices.ContainsFunc(only, func(o string) bool { return strings.HasPrefix(o, g.name+"/") }) {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range g.tests {
				if !whole && !slices.Contains(only, g.name+"/"+tt.name) {
					continue
				}
				if spools, ok := backupTests[g.name+"/"+tt.name]; ok && spools != (traits.BackupTool == "") {
					continue // the other way's form of the test
				}
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.run(t, newEnv(t, open, traits))
				})
			}
		})
	}
}

// test is one behaviour of one service, run on a store of its own.
type test struct {
	name string
	run  func(t *testing.T, e *env)
}

// env is one subtest's store, its clock and what it has set up.
type env struct {
	*link.Store
	t      *testing.T
	clock  *clocktest.Clock
	events *encoder
	reopen func() *link.Store
	ctx    context.Context
	traits Traits
}

func newEnv(t *testing.T, open Opener, traits Traits) *env {
	e := &env{t: t, clock: clocktest.New(t0), events: &encoder{}, ctx: context.Background(), traits: traits}
	e.Store, e.reopen = open(t, Config{Now: e.clock.Now, Events: e.events, AliasHold: aliasHold})
	return e
}

// restart closes the store and opens its data again.
func (e *env) restart() {
	e.t.Helper()
	if err := e.Data.Close(); err != nil {
		e.t.Fatalf("close: %v", err)
	}
	e.Store = e.reopen()
}

// now returns the clock's time.
func (e *env) now() time.Time { return e.clock.Now() }

// as returns a context whose changes are made by the user u from addr.
func (e *env) as(u *link.User, addr string) context.Context {
	return link.WithActor(e.ctx, link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, addr)
}

// wantCode fails unless err has the domain error code want ("" for nil).
func wantCode(t *testing.T, err error, want string) {
	t.Helper()
	if got := link.ErrorCode(err); got != want {
		t.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

func ptr[T any](v T) *T { return &v }
