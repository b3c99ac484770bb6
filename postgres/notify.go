package postgres

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// cacheChannel is the channel on which every linkbolt process on the
// database announces the changes that make what redirects keep in memory
// stale (see redirectCache), in the transaction of the change, so that
// the notification goes out when it commits. A payload is the process's
// instance (DB.instance), a space and one of:
//
//	"l" domain "\n" alias   the link of that alias changed or went
//	"L"                     any link may have (a campaign's UTM values)
//	"d"                     the verified domains changed
//	"b"                     the blocklist's entries changed
//
// A process skips its own: it made its caches stale when the change's
// transaction ended.
const cacheChannel = "linkbolt_cache"

// notifyCache sends what names in tx (each "l…", "L" or "d").
func (db *DB) notifyCache(ctx context.Context, tx pgx.Tx, what ...string) error {
	if len(what) == 0 {
		return nil
	}
	payloads := make([]string, len(what))
	for i, w := range what {
		payloads[i] = db.instance + " " + w
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify('`+cacheChannel+`', p) FROM unnest($1::text[]) AS p`, payloads)
	return err
}

func linkPayload(domain, alias string) string { return "l" + aliasLockKey(domain, alias) }

// listenRetry bounds the wait before the listener connects again.
const listenRetry = 5 * time.Second

// cacheListener holds a connection of its own that listens on
// cacheChannel and makes what the notifications name stale in the
// caches. While it listens, the caches keep what they read for
// redirectCacheTTLListening; while it does not (it could not connect, or
// lost its connection), for redirectCacheTTL, and when it listens again
// they start empty, as changes may have gone unheard meanwhile.
type cacheListener struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// listening starts the listener of db's caches the first time it is
// called; the caches' readers call it.
func (db *DB) listening() { db.listenOnce.Do(db.startListening) }

// startListening starts the listener of db's caches.
func (db *DB) startListening() {
	ctx, cancel := context.WithCancel(context.Background())
	l := &cacheListener{cancel: cancel, done: make(chan struct{})}
	db.listener = l
	go func() {
		defer close(l.done)
		const first = 100 * time.Millisecond
		wait := first
		for ctx.Err() == nil {
			listened, err := db.listen(ctx)
			if err != nil && ctx.Err() == nil {
				db.logger.Debug("postgres: listening for cache changes stopped; redirects read links at most a second old meanwhile",
					"err", db.redact(err))
			}
			if listened {
				wait = first // a connection lost, not refused: try again soon
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, listenRetry)
		}
	}()
}

// listen connects, listens and hears notifications until its connection
// or ctx ends; listened says whether it got to listen.
func (db *DB) listen(ctx context.Context) (listened bool, err error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "linkbolt cache listener"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+cacheChannel+`; LISTEN `+clickChannel); err != nil {
		return false, err
	}
	// What changed while nobody listened is unknown: everything kept is
	// read again (and still answered while the database cannot be).
	db.links.forgetFreshness()
	db.domains.forgetFreshness()
	db.blocklistVersion.Add(1)
	db.links.setListening(true)
	db.domains.setListening(true)
	// Streams opened elsewhere while this process did not listen are
	// announced again at once.
	_ = db.askWatchers(ctx)
	defer func() {
		db.links.setListening(false)
		db.domains.setListening(false)
	}()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if n.Channel == clickChannel {
			db.heardClicks(n.Payload)
			continue
		}
		db.heard(n.Payload)
	}
}

// heard makes what payload names stale, unless this process sent it. A
// link named is dropped; after a campaign's or a domain's change
// everything kept is read again, and still answered while the database
// cannot be read.
func (db *DB) heard(payload string) {
	from, what, _ := strings.Cut(payload, " ")
	if from == db.instance {
		return
	}
	switch {
	case strings.HasPrefix(what, "l"):
		db.links.invalidateKey(what[1:])
	case what == "d":
		db.domains.changedElsewhere()
	case what == "b":
		db.blocklistVersion.Add(1)
	default: // "L", and anything this linkbolt does not know
		db.links.changedElsewhere()
	}
}

// stopListening stops the listener and waits for it; none starts after.
func (db *DB) stopListening() {
	db.listenOnce.Do(func() {})
	if l := db.listener; l != nil {
		l.once.Do(func() {
			l.cancel()
			<-l.done
		})
	}
}
