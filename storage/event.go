package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// eventRecord is an event in the events bucket (the outbox), keyed by its
// sequence.
type eventRecord struct {
	Workspace uint64          `json:"ws"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// eventBody is the JSON body every delivery of an event carries: the
// event as receivers see it, fixed when the event is written.
type eventBody struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

// appendEvent writes an event to the outbox, sets its ID, and queues one
// delivery of it to each enabled webhook of the workspace subscribed to
// its type, all in tx: the event and its deliveries exist if and only if
// the change that caused them is committed. The deliveries are created at
// the event's CreatedAt (the time of the change; set to the current time
// when zero) and are due at once. ev.Data must be JSON.
func appendEvent(tx *bolt.Tx, wid uint64, ev *link.Event) error {
	hooks, err := subscribers(tx, wid, ev.Type)
	if err != nil {
		return err
	}
	return appendEventTo(tx, wid, ev, hooks)
}

// appendEventTo is appendEvent with the subscribed webhooks already looked
// up.
func appendEventTo(tx *bolt.Tx, wid uint64, ev *link.Event, hooks []uint64) error {
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = time.Now()
	}
	at := ev.CreatedAt.UTC()
	b := tx.Bucket(bucketEvents)
	b.FillPercent = appendFill
	seq, err := nextID(b)
	if err != nil {
		return err
	}
	ev.ID = formatID(prefixEvent, seq)
	if err := putJSON(b, itob(seq), &eventRecord{Workspace: wid, Type: ev.Type, CreatedAt: at, Data: ev.Data}); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	if len(hooks) == 0 {
		return nil
	}
	body, err := json.Marshal(eventBody{ID: ev.ID, Type: ev.Type, CreatedAt: at, WorkspaceID: formatID(prefixWorkspace, wid), Data: ev.Data})
	if err != nil {
		return fmt.Errorf("encode event body: %w", err)
	}
	for _, wh := range hooks {
		rec := &deliveryRecord{Webhook: wh, Workspace: wid, Event: seq, Type: ev.Type, Payload: body,
			Status: string(link.DeliveryPending), NextAttemptAt: &at, QueuedAt: at, CreatedAt: at, UpdatedAt: at}
		if _, err := newDelivery(tx, rec); err != nil {
			return err
		}
	}
	return nil
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

// clickEventData is the data of a link.clicked event: the click's
// dimensions as analytics store them ("direct", "unknown" for missing
// values), never its address, user agent or visitor hash.
type clickEventData struct {
	LinkID   string    `json:"link_id"`
	Time     time.Time `json:"time"`
	Referrer string    `json:"referrer"`
	Country  string    `json:"country"`
	Device   string    `json:"device"`
	Browser  string    `json:"browser"`
	OS       string    `json:"os"`
	Bot      bool      `json:"bot"`
}

// appendClickEvents writes a link.clicked event, and its deliveries, for
// each click of a workspace with an enabled webhook subscribed to
// link.clicked, in the order of the batch; the events are created at now.
// A workspace without such a webhook costs one index lookup per batch.
func appendClickEvents(tx *bolt.Tx, clicks []parsedClick, now time.Time) error {
	var lastWS uint64
	var hooks []uint64
	var subs map[uint64][]uint64
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
		data, err := json.Marshal(clickEventData{
			LinkID: formatID(prefixLink, c.link), Time: time.Unix(0, c.nanos).UTC(),
			Referrer: c.vals[dimReferrers], Country: c.vals[dimCountries], Device: c.vals[dimDevices],
			Browser: c.vals[dimBrowsers], OS: c.vals[dimOS], Bot: c.bot,
		})
		if err != nil {
			return fmt.Errorf("encode click event: %w", err)
		}
		ev := &link.Event{Type: link.EventLinkClicked, WorkspaceID: formatID(prefixWorkspace, c.ws), CreatedAt: now, Data: data}
		if err := appendEventTo(tx, c.ws, ev, hooks); err != nil {
			return err
		}
	}
	return nil
}
