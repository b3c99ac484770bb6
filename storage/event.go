package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

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

// appendEvent writes an event to the outbox, sets its ID, and queues one
// delivery of it to each enabled webhook of the workspace subscribed to
// its type, all in tx: the event and its deliveries exist if and only if
// the change that caused them is committed. Each delivery's body is
//
//	{"id":"evt_…","type":"…","created_at":"…","workspace_id":"ws_…","data":<ev.Data>}
//
// fixed now. The deliveries are created at the event's CreatedAt (the
// time of the change; set to the current time when zero) and are due at
// once. ev.Data must be JSON (empty means null).
func appendEvent(tx *bolt.Tx, wid uint64, ev *link.Event) error {
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return errors.New("storage: event data is not JSON")
	}
	hooks, err := subscribers(tx, wid, ev.Type)
	if err != nil {
		return err
	}
	return newEventWriter(tx, false).append(wid, ev, hooks)
}

// eventWriter writes events and their deliveries in one transaction. It
// encodes the records by hand into an arena (bolt keeps the keys and
// values it is given until the commit): a batch of clicks writes an event
// and a delivery per click, and with encoding/json a batch took three
// times as long as with these encoders.
type eventWriter struct {
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

func newEventWriter(tx *bolt.Tx, batch bool) *eventWriter {
	w := &eventWriter{batch: batch, ids: idsOf(tx), tx: tx,
		events: tx.Bucket(bucketEvents), deliveries: tx.Bucket(bucketDeliveries),
		byWebhook: tx.Bucket(bucketDeliveriesWebhook), queue: tx.Bucket(bucketDeliveriesQueue),
	}
	// Events and deliveries are appended in key order (queue entries
	// only within each webhook's range).
	w.events.FillPercent, w.deliveries.FillPercent = appendFill, appendFill
	return w
}

// append writes one event of workspace wid, with valid JSON data, and a
// pending delivery of it to each of hooks.
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
	b = appendJSONString(b, ev.Type)
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
	if len(hooks) == 0 {
		w.body = b
		return nil
	}

	// The body of the deliveries.
	b = b[:0]
	b = append(b, `{"id":`...)
	b = appendJSONString(b, ev.ID)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, ev.Type)
	b = append(b, `,"created_at":`...)
	b = appendJSONTime(b, at)
	b = append(b, `,"workspace_id":"`...)
	b = w.ids.appendID(b, prefixWorkspace, wid)
	b = append(b, `","data":`...)
	b = append(b, data...)
	b = append(b, '}')
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
// link.clicked, in the order of the batch; the events are created at now.
// A workspace without such a webhook costs one index lookup per batch.
// The event's data is the click's dimensions as analytics store them
// ("direct", "unknown" for missing values), never its address, user agent
// or visitor hash:
//
//	{"link_id":"lnk_…","time":"…","referrer":"…","country":"…","device":"…","browser":"…","os":"…","bot":false}
func appendClickEvents(tx *bolt.Tx, clicks []parsedClick, now time.Time) error {
	var w *eventWriter
	var lastWS uint64
	var hooks []uint64
	var subs map[uint64][]uint64
	var data []byte
	ev := link.Event{Type: link.EventLinkClicked}
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
		}
		if len(hooks) == 0 {
			continue
		}
		if w == nil {
			w = newEventWriter(tx, true)
		}
		data = append(data[:0], `{"link_id":"`...)
		data = w.ids.appendID(data, prefixLink, c.link)
		data = append(data, `","time":`...)
		data = appendJSONTime(data, time.Unix(0, c.nanos).UTC())
		for _, f := range [...]struct {
			name string
			dim  byte
		}{{`,"referrer":`, dimReferrers}, {`,"country":`, dimCountries}, {`,"device":`, dimDevices}, {`,"browser":`, dimBrowsers}, {`,"os":`, dimOS}} {
			data = append(data, f.name...)
			data = appendJSONString(data, c.vals[f.dim])
		}
		data = append(data, `,"bot":`...)
		data = strconv.AppendBool(data, c.bot)
		data = append(data, '}')
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

// appendJSONString appends s as a JSON string, escaped as encoding/json
// does it (without its HTML escaping): invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
