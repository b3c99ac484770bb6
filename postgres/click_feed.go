package postgres

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// clickChannel carries the live click streams between the linkbolt
// processes on the database (link.ClickFeed), apart from cacheChannel so
// that a process that does not know it is never disturbed by it. A
// payload is the sender's instance, a space and one of:
//
//	"w" ws ...                       the sender streams these workspaces
//	"q"                              the sender asks who streams what
//	"c" ws skipped "\n" link data …  clicks of ws, a line each: its link,
//	                                 a space, its link.clicked data; and
//	                                 how many more the sender left out
//
// Clicks go only for workspaces another process announced: nothing is
// sent while nobody streams.
const clickChannel = "linkbolt_clicks"

// maxPayload keeps a notification under PostgreSQL's 8,000 bytes.
const maxPayload = 7900

var _ link.ClickFeed = (*DB)(nil)

// clickWatch holds what the other processes announced.
type clickWatch struct {
	mu      sync.Mutex
	until   map[string]time.Time // workspace → end of its announcement
	latest  atomic.Int64         // the latest end of any, in Unix nanoseconds
	deliver atomic.Pointer[func(ws string, clicks []link.StreamedClick, skipped int)]
	asked   atomic.Pointer[func()]
}

// WatchClicks announces that this process streams the workspaces' clicks.
func (db *DB) WatchClicks(ctx context.Context, workspaceIDs []string) error {
	db.listening()
	prefix := db.instance + " w"
	var payloads []string
	var b strings.Builder
	for _, ws := range workspaceIDs {
		if b.Len() > 0 && b.Len()+1+len(ws) > maxPayload {
			payloads = append(payloads, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(prefix)
		}
		b.WriteByte(' ')
		b.WriteString(ws)
	}
	if b.Len() > 0 {
		payloads = append(payloads, b.String())
	}
	return db.notifyClicks(ctx, payloads)
}

// AnyClickWatched reports whether another process streams any
// workspace's clicks.
func (db *DB) AnyClickWatched() bool {
	db.listening()
	return db.now().UnixNano() < db.clickWatch.latest.Load()
}

// ClickWatched reports whether another process streams the workspace's
// clicks.
func (db *DB) ClickWatched(workspaceID string) bool {
	w := &db.clickWatch
	w.mu.Lock()
	until, ok := w.until[workspaceID]
	w.mu.Unlock()
	return ok && db.now().Before(until)
}

// PublishClicks sends clicks of the workspace to the processes that
// stream it, in notifications of at most maxPayload bytes.
func (db *DB) PublishClicks(ctx context.Context, workspaceID string, clicks []link.StreamedClick, skipped int) error {
	head := db.instance + " c " + workspaceID + " "
	var payloads []string
	var b bytes.Buffer
	start := func(skip int) {
		b.Reset()
		b.WriteString(head)
		b.WriteString(strconv.Itoa(skip))
	}
	start(skipped)
	n := 0
	for _, c := range clicks {
		line := len(c.LinkID) + 2 + len(c.Data)
		if len(head)+16+line > maxPayload {
			continue // never so large: a click's data is a few hundred bytes
		}
		if b.Len()+line > maxPayload {
			payloads = append(payloads, b.String())
			start(0)
			n = 0
		}
		b.WriteByte('\n')
		b.WriteString(c.LinkID)
		b.WriteByte(' ')
		b.Write(c.Data)
		n++
	}
	if n > 0 || skipped > 0 && len(payloads) == 0 {
		payloads = append(payloads, b.String())
	}
	return db.notifyClicks(ctx, payloads)
}

// OnClicks sets the function given the clicks other processes send.
func (db *DB) OnClicks(fn func(workspaceID string, clicks []link.StreamedClick, skipped int)) {
	db.clickWatch.deliver.Store(&fn)
	db.listening()
}

// OnWatchAsked sets the function called when another process asks which
// workspaces are streamed.
func (db *DB) OnWatchAsked(fn func()) {
	db.clickWatch.asked.Store(&fn)
	db.listening()
}

// askWatchers asks the other processes which workspaces they stream: the
// listener does it each time it begins to listen.
func (db *DB) askWatchers(ctx context.Context) error {
	return db.notifyClicks(ctx, []string{db.instance + " q"})
}

func (db *DB) notifyClicks(ctx context.Context, payloads []string) error {
	if len(payloads) == 0 {
		return nil
	}
	_, err := db.pool.Exec(ctx, `SELECT pg_notify('`+clickChannel+`', p) FROM unnest($1::text[]) AS p`, payloads)
	return err
}

// heardClicks takes a notification of clickChannel, unless this process
// sent it.
func (db *DB) heardClicks(payload string) {
	from, rest, _ := strings.Cut(payload, " ")
	if from == db.instance {
		return
	}
	kind, rest, _ := strings.Cut(rest, " ")
	w := &db.clickWatch
	switch kind {
	case "q":
		if fn := w.asked.Load(); fn != nil {
			(*fn)()
		}
	case "w":
		until := db.now().Add(link.ClickWatchTTL)
		w.mu.Lock()
		if w.until == nil {
			w.until = map[string]time.Time{}
		}
		now := db.now()
		for ws, u := range w.until { // forget what is over
			if !now.Before(u) {
				delete(w.until, ws)
			}
		}
		for _, ws := range strings.Fields(rest) {
			w.until[ws] = until
		}
		w.mu.Unlock()
		w.latest.Store(until.UnixNano())
	case "c":
		fn := w.deliver.Load()
		if fn == nil {
			return
		}
		first, lines, _ := strings.Cut(rest, "\n")
		ws, skip, _ := strings.Cut(first, " ")
		skipped, err := strconv.Atoi(skip)
		if err != nil || skipped < 0 {
			return
		}
		var clicks []link.StreamedClick
		for lines != "" {
			var line string
			line, lines, _ = strings.Cut(lines, "\n")
			id, data, ok := strings.Cut(line, " ")
			if ok && data != "" {
				clicks = append(clicks, link.StreamedClick{LinkID: id, Data: []byte(data)})
			}
		}
		(*fn)(ws, clicks, skipped)
	}
}
