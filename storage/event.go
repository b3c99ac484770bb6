package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// eventRecord is an event in the events bucket (the outbox), keyed by its
// sequence. eventWriter encodes it by hand, the same JSON.
type eventRecord struct {
	Workspace uint64          `json:"ws"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// appendLinkEvent writes the event of a change of l (link.created,
// link.updated or link.deleted), created at, when enc is set: its data is
// the link as enc encodes it.
func appendLinkEvent(tx *bolt.Tx, enc link.EventEncoder, wid uint64, eventType string, l *link.Link, at time.Time) error {
	if enc == nil {
		return nil
	}
	return appendEvent(tx, enc, wid, &link.Event{Type: eventType, CreatedAt: at}, func() ([]byte, error) { return enc.LinkData(l) })
}

// appendCampaignEvent writes the campaign.updated event of a change of c,
// created at c.UpdatedAt, when enc is set.
func appendCampaignEvent(tx *bolt.Tx, enc link.EventEncoder, wid uint64, c *link.Campaign, changes map[string][2]string) error {
	if enc == nil {
		return nil
	}
	return appendEvent(tx, enc, wid, &link.Event{Type: link.EventCampaignUpdated, CreatedAt: c.UpdatedAt},
		func() ([]byte, error) { return enc.CampaignData(c, changes) })
}

// pingEvent returns the event of a ping of workspace wid at now and the
// body of its delivery, encoded by enc. A ping takes an event ID, which
// its delivery logs and its body carries, but is not kept in the outbox:
// it goes to one webhook and is no change of the workspace.
func pingEvent(tx *bolt.Tx, enc link.EventEncoder, wid uint64, now time.Time) (seq uint64, body []byte, err error) {
	if enc == nil {
		return 0, nil, errors.New("storage: no event encoder for pings")
	}
	data, err := enc.PingData()
	if err != nil {
		return 0, nil, err
	}
	if !json.Valid(data) {
		return 0, nil, errors.New("storage: ping data is not JSON")
	}
	if seq, err = nextID(tx.Bucket(bucketEvents)); err != nil {
		return 0, nil, err
	}
	ids := idsOf(tx)
	ev := link.Event{ID: ids.formatID(prefixEvent, seq), Type: link.EventPing,
		WorkspaceID: ids.formatID(prefixWorkspace, wid), CreatedAt: now, Data: data}
	return seq, enc.AppendEvent(nil, &ev), nil
}

// appendEvent writes an event to the outbox, sets its ID, and queues one
// delivery of it to each enabled webhook of the workspace subscribed to
// its type, all in tx: the event and its deliveries exist if and only if
// the change that caused them is committed. An event no such webhook is
// subscribed to is neither encoded nor kept. Each delivery's body, encoded
// by enc, is fixed now. The deliveries are created at the event's
// CreatedAt (the time of the change; set to the current time when zero)
// and are due at once. data returns ev.Data, which must be JSON (empty
// means null).
func appendEvent(tx *bolt.Tx, enc link.EventEncoder, wid uint64, ev *link.Event, data func() ([]byte, error)) error {
	hooks, err := subscribers(tx, wid, ev.Type)
	if err != nil || len(hooks) == 0 {
		// Without a subscriber nothing would ever read the event, and a
		// million links created would leave a million copies of
		// themselves for the pruner.
		return err
	}
	if ev.Data, err = data(); err != nil {
		return err
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return errors.New("storage: event data is not JSON")
	}
	return newEventWriter(tx, enc, false).append(wid, ev, hooks)
}

// eventWriter writes events and their deliveries in one transaction. It
// encodes the records by hand into an arena (bolt keeps the keys and
// values it is given until the commit): a batch of clicks writes an event
// and a delivery per click, and with encoding/json a batch took three
// times as long as with these encoders.
type eventWriter struct {
	enc                                  link.EventEncoder
	events, deliveries, byWebhook, queue *bolt.Bucket
	ids                                  *idCodec
	// batch says that many events are written: their records are cut
	// from mem.
	batch     bool
	mem       arena
	body, rec []byte // scratch
	// queued counts the deliveries queued, added to the outbox depth when
	// tx commits.
	tx     *bolt.Tx
	queued int64
}

func newEventWriter(tx *bolt.Tx, enc link.EventEncoder, batch bool) *eventWriter {
	w := &eventWriter{enc: enc, batch: batch, ids: idsOf(tx), tx: tx,
		events: tx.Bucket(bucketEvents), deliveries: tx.Bucket(bucketDeliveries),
		byWebhook: tx.Bucket(bucketDeliveriesWebhook), queue: tx.Bucket(bucketDeliveriesQueue),
	}
	// Events and deliveries are appended in key order (queue entries
	// only within each webhook's range).
	w.events.FillPercent, w.deliveries.FillPercent = appendFill, appendFill
	return w
}

// append writes one event of workspace wid, with valid JSON data, and a
// pending delivery of it to each of hooks, at least one: its callers
// write no event no webhook is subscribed to (see appendEvent). It sets
// ev.ID, and ev.WorkspaceID when empty.
func (w *eventWriter) append(wid uint64, ev *link.Event, hooks []uint64) error {
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = time.Now()
	}
	at := ev.CreatedAt.UTC()
	data := ev.Data
	if len(data) == 0 {
		data = []byte("null")
	}
	seq, err := nextID(w.events)
	if err != nil {
		return err
	}
	ev.ID = w.ids.formatID(prefixEvent, seq)

	// {"ws":…,"type":…,"created_at":…,"data":…}
	b := w.body[:0]
	b = append(b, `{"ws":`...)
	b = strconv.AppendUint(b, wid, 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, ev.Type) // an event type is plain ASCII
	b = append(b, `,"created_at":`...)
	b = appendJSONTime(b, at)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	b = append(b, '}')
	// A click's event lives only in the deliveries it fans out to: clicks
	// come by the tens of thousands a second, and a second copy of each
	// would double the writes of every batch for nothing a webhook needs.
	if ev.Type != link.EventLinkClicked {
		if err := w.events.Put(w.key(seq), w.copy(b)); err != nil {
			return fmt.Errorf("put event: %w", err)
		}
	}

	// The body of the deliveries.
	if ev.WorkspaceID == "" {
		ev.WorkspaceID = w.ids.formatID(prefixWorkspace, wid)
	}
	ev.CreatedAt = at
	b = w.enc.AppendEvent(b[:0], ev)
	body := b
	for _, wh := range hooks {
		did, err := nextID(w.deliveries)
		if err != nil {
			return err
		}
		q, err := nextID(w.queue)
		if err != nil {
			return err
		}
		rec := deliveryRecord{Webhook: wh, Workspace: wid, Event: seq, Type: ev.Type, Payload: body,
			Status: string(link.DeliveryPending), NextAttemptAt: &at, Queue: q, QueuedAt: at, CreatedAt: at, UpdatedAt: at}
		r := rec.appendTo(w.rec[:0])
		w.rec = r
		if err := w.deliveries.Put(w.key(did), w.copy(r)); err != nil {
			return fmt.Errorf("put delivery: %w", err)
		}
		if err := w.byWebhook.Put(w.key2(wh, did), []byte{}); err != nil {
			return fmt.Errorf("index delivery: %w", err)
		}
		if err := w.queue.Put(w.key2(wh, q), w.key(did)); err != nil {
			return fmt.Errorf("queue delivery: %w", err)
		}
	}
	if w.queued == 0 {
		if c := outboxDepth(w.tx); c != nil {
			w.tx.OnCommit(func() { c.Add(w.queued) })
		}
	}
	w.queued += int64(len(hooks))
	w.body = body
	return nil
}

// bytes returns n bytes to give bolt: from the arena for a batch, else
// allocated on their own (an arena block is big).
func (w *eventWriter) bytes(n int) []byte {
	if w.batch {
		return w.mem.alloc(n)
	}
	return make([]byte, n)
}

func (w *eventWriter) copy(b []byte) []byte {
	c := w.bytes(len(b))
	copy(c, b)
	return c
}

// key returns v as an 8-byte big-endian key.
func (w *eventWriter) key(v uint64) []byte {
	k := w.bytes(8)
	binary.BigEndian.PutUint64(k, v)
	return k
}

// key2 returns a and b as a 16-byte big-endian key.
func (w *eventWriter) key2(a, b uint64) []byte {
	k := w.bytes(16)
	binary.BigEndian.PutUint64(k, a)
	binary.BigEndian.PutUint64(k[8:], b)
	return k
}

// appendFill is the fill percent of buckets written in key order (events,
// deliveries): split pages fuller than bolt's half, they rarely take
// inserts again.
const appendFill = 0.9

// subscribers returns the enabled webhooks of workspace wid subscribed to
// events of type typ, from the webhooks.event index: one seek.
func subscribers(tx *bolt.Tx, wid uint64, typ string) ([]uint64, error) {
	prefix := subscriptionPrefix(wid, typ)
	c := tx.Bucket(bucketWebhooksEvent).Cursor()
	var out []uint64
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			return nil, fmt.Errorf("webhooks.event %x: malformed key", k)
		}
		out = append(out, btoi(k[len(prefix):]))
	}
	return out, nil
}

// appendClickEvents writes a link.clicked event, and its deliveries, for
// each click of a workspace with an enabled webhook subscribed to
// link.clicked, in the order of the batch, when enc is set; the events are
// created at now. A workspace without such a webhook costs one index
// lookup per batch. The event's data is the click's dimensions as
// analytics store them ("direct", "unknown" for missing values), encoded
// by enc.AppendClickData.
func appendClickEvents(tx *bolt.Tx, enc link.EventEncoder, clicks []parsedClick, now time.Time) error {
	if enc == nil {
		return nil
	}
	var w *eventWriter
	var lastWS uint64
	var hooks []uint64
	var subs map[uint64][]uint64
	var data []byte
	ev := link.Event{Type: link.EventLinkClicked}
	var click link.ClickEvent // one for the batch: it escapes to enc
	for i := range clicks {
		c := &clicks[i]
		if i == 0 || c.ws != lastWS {
			var ok bool
			if hooks, ok = subs[c.ws]; !ok {
				var err error
				if hooks, err = subscribers(tx, c.ws, link.EventLinkClicked); err != nil {
					return err
				}
				if subs == nil {
					subs = map[uint64][]uint64{}
				}
				subs[c.ws] = hooks
			}
			lastWS = c.ws
			ev.WorkspaceID = ""
		}
		if len(hooks) == 0 {
			continue
		}
		if w == nil {
			w = newEventWriter(tx, enc, true)
		}
		click = link.ClickEvent{
			LinkID: w.ids.formatID(prefixLink, c.link), Time: time.Unix(0, c.nanos).UTC(),
			Referrer: c.vals[dimReferrers], Country: c.vals[dimCountries], Device: c.vals[dimDevices],
			Browser: c.vals[dimBrowsers], OS: c.vals[dimOS], Bot: c.bot,
		}
		data = enc.AppendClickData(data[:0], &click)
		ev.Data, ev.CreatedAt = data, now
		if err := w.append(c.ws, &ev, hooks); err != nil {
			return err
		}
	}
	return nil
}

// appendJSONTime appends t as encoding/json writes a time.Time.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
