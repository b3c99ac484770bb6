package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// The live click stream (GET /v1/events/stream): server-sent events of
// the clicks of one workspace (or one of its links), as they are recorded.
// Each click is the data of a link.clicked webhook event. A stream is fed
// by the recorder's flushes (clicks.flush_interval, a second by default),
// so a click shows there within about that time; on PostgreSQL the other
// linkbolt processes on the database send theirs over the database's
// notifications (link.ClickFeed), so a stream connected to any process
// shows every process's clicks.
//
// Bounds: a stream holds at most streamBuffer clicks not yet written to
// its client; a client that reads slower than its clicks come loses the
// rest, and only it: the stream then says how many it left out (event
// "dropped"), and nothing else waits for it. A workspace has at most
// maxStreamsPerWorkspace streams open, a process maxStreams.
const (
	streamBuffer           = 256
	maxStreamsPerWorkspace = 20
	maxStreams             = 1000
	// defaultStreamHeartbeat is how often an idle stream sends a comment
	// (which keeps proxies from closing it) and checks that its
	// credential still holds.
	defaultStreamHeartbeat = 15 * time.Second
	// streamWriteTimeout bounds one write to a client: one that takes
	// longer ends its stream.
	streamWriteTimeout = 30 * time.Second
	// streamRetry is the reconnection delay the stream suggests to
	// EventSource clients, in milliseconds.
	streamRetry = 5000
	// maxFedClicks bounds the clicks of a workspace one flush sends to the
	// other processes (their streams are told how many it left out).
	maxFedClicks = 200
	// watchEvery is how often a process with streams announces them to
	// the others (link.ClickFeed's announcements hold for ClickWatchTTL).
	watchEvery = 10 * time.Second
)

// clickHub hands the recorded clicks to the open streams.
type clickHub struct {
	feed link.ClickFeed // nil: this process's clicks only (bbolt)

	mu     sync.Mutex
	subs   map[string]map[*clickSub]struct{} // by workspace
	total  int
	closed bool

	open atomic.Int64 // streams open, read without mu by the tap
	// done is closed when the server shuts down: every stream ends.
	done      chan struct{}
	closeOnce sync.Once

	fed      chan fedClicks // clicks waiting to go to the other processes
	fedOut   sync.WaitGroup
	feedOnce sync.Once
	// asked wakes the announcements when another process asks for them.
	asked chan struct{}
}

// clickSub is one open stream.
type clickSub struct {
	ws, linkID string
	ch         chan []byte // the data of each click, encoded
	dropped    atomic.Int64
	wake       chan struct{} // a dropped count to tell, when ch is full
}

type fedClicks struct {
	ws      string
	clicks  []link.StreamedClick
	skipped int
}

func newClickHub(feed link.ClickFeed) *clickHub {
	h := &clickHub{feed: feed, subs: map[string]map[*clickSub]struct{}{}, done: make(chan struct{})}
	if feed != nil {
		h.fed, h.asked = make(chan fedClicks, 16), make(chan struct{}, 1)
		feed.OnClicks(h.deliver)
		feed.OnWatchAsked(func() {
			select {
			case h.asked <- struct{}{}:
			default:
			}
		})
	}
	return h
}

// startFeed starts, once, what sends clicks and announcements to the
// other processes: when this process first has a stream, or clicks
// another one streams. Nothing runs before (or without a feed).
func (h *clickHub) startFeed() {
	if h.feed == nil {
		return
	}
	h.feedOnce.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.closed {
			return
		}
		h.fedOut.Add(2)
		go h.sendFed()
		go h.announce()
	})
}

// Answers to a stream the hub does not take: over the workspace's bound
// (429), over the process's, or while the server shuts down (503). Each
// comes with Retry-After.
var (
	errWorkspaceStreams = link.Errorf(link.ERATELIMITED, "this workspace has %d live click streams open, the most it may; close one first", maxStreamsPerWorkspace)
	errServerStreams    = errHTTP(codeBusy, fmt.Sprintf("this server has %d live click streams open, the most it takes; retry later", maxStreams))
	errStreamsClosed    = errHTTP(codeBusy, "the server is shutting down; connect again")
)

// subscribe opens a stream of ws's clicks (of linkID only, when set).
func (h *clickHub) subscribe(ws, linkID string) (*clickSub, error) {
	sub := &clickSub{ws: ws, linkID: linkID, ch: make(chan []byte, streamBuffer), wake: make(chan struct{}, 1)}
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return nil, errStreamsClosed
	case len(h.subs[ws]) >= maxStreamsPerWorkspace:
		h.mu.Unlock()
		return nil, errWorkspaceStreams
	case h.total >= maxStreams:
		h.mu.Unlock()
		return nil, errServerStreams
	}
	first := h.subs[ws] == nil
	if first {
		h.subs[ws] = map[*clickSub]struct{}{}
	}
	h.subs[ws][sub] = struct{}{}
	h.total++
	h.open.Add(1)
	h.mu.Unlock()
	h.startFeed()
	if first && h.feed != nil {
		// The other processes hear of it before the stream says it is
		// ready: their next flush sends its clicks.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = h.feed.WatchClicks(ctx, []string{ws}) // announced again every watchEvery
		cancel()
	}
	return sub, nil
}

func (h *clickHub) unsubscribe(sub *clickSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub.ws][sub]; !ok {
		return
	}
	delete(h.subs[sub.ws], sub)
	if len(h.subs[sub.ws]) == 0 {
		delete(h.subs, sub.ws)
	}
	h.total--
	h.open.Add(-1)
}

// watching reports whether ws has a stream open here.
func (h *clickHub) watching(ws string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[ws]) > 0
}

// tap is the recorder's: it hands a stored batch to the streams of this
// process and, for workspaces another process streams, to the feed. It
// never waits: a full stream drops, a full feed queue skips.
func (h *clickHub) tap(batch []link.Click) {
	local := h.open.Load() > 0
	remote := h.feed != nil && h.feed.AnyClickWatched()
	if !local && !remote {
		return
	}
	type wsState struct{ local, remote bool }
	states := map[string]wsState{}
	byWS := map[string][]link.StreamedClick{}
	var order []string
	for i := range batch {
		c := &batch[i]
		st, seen := states[c.WorkspaceID]
		if !seen {
			st = wsState{local: local && h.watching(c.WorkspaceID), remote: remote && h.feed.ClickWatched(c.WorkspaceID)}
			states[c.WorkspaceID] = st
			order = append(order, c.WorkspaceID)
		}
		if !st.local && !st.remote {
			continue
		}
		ev := c.Event()
		byWS[c.WorkspaceID] = append(byWS[c.WorkspaceID], link.StreamedClick{LinkID: c.LinkID, Data: webhook.AppendClickData(nil, &ev)})
	}
	for _, ws := range order {
		cs := byWS[ws]
		if len(cs) == 0 {
			continue
		}
		st := states[ws]
		if st.local {
			h.deliver(ws, cs, 0)
		}
		if st.remote {
			h.startFeed()
			f := fedClicks{ws: ws, clicks: cs}
			if len(cs) > maxFedClicks {
				f.clicks, f.skipped = cs[len(cs)-maxFedClicks:], len(cs)-maxFedClicks
			}
			select {
			case h.fed <- f:
			default: // the database is slow: the other streams are told
				select {
				case h.fed <- fedClicks{ws: ws, skipped: len(cs)}:
				default:
				}
			}
		}
	}
}

// deliver hands a workspace's clicks to its streams here; skipped is how
// many its sender left out.
func (h *clickHub) deliver(ws string, clicks []link.StreamedClick, skipped int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs[ws] {
		lost := int64(skipped)
		for _, c := range clicks {
			if sub.linkID != "" && c.LinkID != sub.linkID {
				continue
			}
			select {
			case sub.ch <- c.Data:
			default:
				lost++
			}
		}
		if lost > 0 {
			sub.dropped.Add(lost)
			select {
			case sub.wake <- struct{}{}:
			default:
			}
		}
	}
}

// sendFed sends the clicks the tap queued for the other processes.
func (h *clickHub) sendFed() {
	defer h.fedOut.Done()
	for {
		select {
		case <-h.done:
			return
		case f := <-h.fed:
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = h.feed.PublishClicks(ctx, f.ws, f.clicks, f.skipped) // a live view: a failure loses them
			cancel()
		}
	}
}

// announce tells the other processes which workspaces this one streams:
// every watchEvery, and at once when one asks (it has just begun to
// listen).
func (h *clickHub) announce() {
	defer h.fedOut.Done()
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		case <-h.asked:
		}
		h.mu.Lock()
		ws := make([]string, 0, len(h.subs))
		for id := range h.subs {
			ws = append(ws, id)
		}
		h.mu.Unlock()
		if len(ws) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = h.feed.WatchClicks(ctx, ws)
			cancel()
		}
	}
}

// close ends every stream and refuses new ones (the server shuts down).
func (h *clickHub) close() {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		close(h.done)
		h.fedOut.Wait()
	})
}

// handleClickStream serves GET /v1/events/stream.
func (s *Server) handleClickStream(w http.ResponseWriter, r *http.Request, c *caller) error {
	q := r.URL.Query()
	for name := range q {
		if name != "link_id" && name != "api_key" && name != "workspace_id" {
			return link.Errorf(link.EINVALIDREQUEST, "unknown query parameter %q: the stream takes link_id", name)
		}
	}
	linkID := q.Get("link_id")
	if linkID != "" {
		if _, err := s.links.FindLinkByID(r.Context(), c.workspace.ID, linkID); err != nil {
			return err
		}
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	sub, err := s.streams.subscribe(c.workspace.ID, linkID)
	if err != nil {
		retryAfter(w, watchEvery)
		return err
	}
	defer s.streams.unsubscribe(sub)

	rc := http.NewResponseController(w)
	// The stream outlives the server's read timeout, which would end the
	// request; each write gets a deadline of its own.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)

	var buf bytes.Buffer
	ready, _ := json.Marshal(struct {
		WorkspaceID string `json:"workspace_id"`
		LinkID      string `json:"link_id,omitempty"`
	}{c.workspace.ID, linkID})
	buf.WriteString("retry: " + strconv.Itoa(streamRetry) + "\n\n")
	writeEvent(&buf, "ready", ready)
	// A write blocked on a client that stopped reading must end when the
	// server closes, not streamWriteTimeout later: http.Server.Shutdown
	// waits for this handler. The deadline is set under deadlineMu, so
	// that a write begun after the close gets the past deadline too.
	var deadlineMu sync.Mutex
	closing := false
	ended := make(chan struct{})
	defer func() { // no deadline is set once the handler returns
		deadlineMu.Lock()
		closing = true
		deadlineMu.Unlock()
		close(ended)
	}()
	go func() {
		select {
		case <-s.streams.done:
			deadlineMu.Lock()
			if !closing {
				closing = true
				_ = rc.SetWriteDeadline(time.Now())
			}
			deadlineMu.Unlock()
		case <-ended:
		}
	}()
	send := func() error {
		deadlineMu.Lock()
		if closing {
			deadlineMu.Unlock()
			return errStreamsClosed
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		deadlineMu.Unlock()
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
		buf.Reset()
		return rc.Flush()
	}
	if err := send(); err != nil {
		return nil // the client went away
	}
	every := s.cfg.StreamHeartbeat
	if every <= 0 {
		every = defaultStreamHeartbeat
	}
	beat := time.NewTicker(every)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streams.done:
			return nil
		case <-beat.C:
			if !s.streamCallerHolds(r, c.workspace.ID) {
				writeEvent(&buf, "end", []byte(`{"reason":"the stream's credential no longer holds"}`))
				_ = send()
				return nil
			}
			buf.WriteString(": ping\n\n")
		case data := <-sub.ch:
			writeEvent(&buf, "click", data)
			// What else is waiting goes in the same write.
			for more := true; more && buf.Len() < 64<<10; {
				select {
				case data := <-sub.ch:
					writeEvent(&buf, "click", data)
				default:
					more = false
				}
			}
		case <-sub.wake:
		}
		if n := sub.dropped.Swap(0); n > 0 {
			writeEvent(&buf, "dropped", []byte(`{"dropped":`+strconv.FormatInt(n, 10)+`}`))
		}
		if buf.Len() > 0 {
			if err := send(); err != nil {
				return nil
			}
		}
	}
}

// writeEvent appends one server-sent event to buf (data is one line of
// JSON).
func writeEvent(buf *bytes.Buffer, name string, data []byte) {
	buf.WriteString("event: ")
	buf.WriteString(name)
	buf.WriteString("\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
}

// streamCallerHolds reports whether the stream's request would still be
// let into workspace ws: its key not revoked or expired, its session not
// ended, its user still a member.
func (s *Server) streamCallerHolds(r *http.Request, ws string) bool {
	c, err := s.authenticate(r)
	if err != nil {
		return false
	}
	if c.user != nil && s.pickWorkspace(r, c) != nil {
		return false
	}
	return c.workspace != nil && c.workspace.ID == ws
}
