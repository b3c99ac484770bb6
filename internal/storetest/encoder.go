package storetest

import (
	"encoding/json"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// encoder is the suite's webhook event encoder: plain JSON of what each
// event is about, so that tests can tell the events apart.
type encoder struct{}

var _ link.EventEncoder = (*encoder)(nil)

func (*encoder) LinkData(l *link.Link) ([]byte, error) {
	data := map[string]string{"id": l.ID, "alias": l.Alias, "destination_url": l.DestinationURL}
	if l.Check != nil {
		data["check_status"], data["check_error"] = string(l.Check.Status), l.Check.Error
	}
	return json.Marshal(data)
}

func (*encoder) CampaignData(after *link.Campaign, changes map[string][2]string) ([]byte, error) {
	return json.Marshal(map[string]any{"id": after.ID, "name": after.Name, "changes": changes})
}

func (*encoder) AppendClickData(b []byte, c *link.ClickEvent) []byte {
	data, _ := json.Marshal(map[string]any{"link_id": c.LinkID, "referrer": c.Referrer, "bot": c.Bot})
	return append(b, data...)
}

func (*encoder) PingData() ([]byte, error) { return []byte(`{"ping":true}`), nil }

func (*encoder) AppendEvent(b []byte, ev *link.Event) []byte {
	data := json.RawMessage("null")
	if len(ev.Data) > 0 {
		data = ev.Data
	}
	body, _ := json.Marshal(payload{ID: ev.ID, Type: ev.Type, WorkspaceID: ev.WorkspaceID, CreatedAt: ev.CreatedAt, Data: data})
	return append(b, body...)
}

// payload is the body of a delivery as encoder writes it.
type payload struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	WorkspaceID string          `json:"workspace_id"`
	CreatedAt   time.Time       `json:"created_at"`
	Data        json.RawMessage `json:"data"`
}

// decode returns the body of a delivery.
func (e *env) decode(d *link.Delivery) payload {
	e.t.Helper()
	var p payload
	if err := json.Unmarshal(d.Payload, &p); err != nil {
		e.t.Fatalf("delivery %s payload %q: %v", d.ID, d.Payload, err)
	}
	return p
}
