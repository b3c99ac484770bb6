package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestCampaigns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The outbox keeps the events a webhook is subscribed to.
	e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["campaign.updated","link.updated"]}`, 201)
	c := e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Spring sale","utm_source":"newsletter","utm_campaign":"spring"}`, 201)
	id := c.str("id")
	if c.str("status") != "active" || c.path("links") != float64(0) || c.path("utm_medium") != nil {
		t.Fatalf("created: %s", c.raw)
	}
	// Links join it and inherit its UTM values where they set none.
	l1 := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"s1","campaign_id":"`+id+`"}`, 201)
	if l1.str("campaign_id") != id || l1.path("utm_source") != nil {
		t.Fatalf("link: %s", l1.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"s2","campaign_id":"`+id+`","utm_source":"own"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/c","alias":"s3"}`, 201)
	loc := func(alias string) string {
		t.Helper()
		return e.do("GET", "/"+alias, "", "", 302).header.Get("Location")
	}
	if got, want := loc("s1"), "https://example.com/a?utm_source=newsletter&utm_campaign=spring"; got != want {
		t.Fatalf("s1 Location %q, want %q", got, want)
	}
	if got, want := loc("s2"), "https://example.com/b?utm_source=own&utm_campaign=spring"; got != want {
		t.Fatalf("s2 Location %q, want %q", got, want)
	}
	// A change of the campaign applies to the next redirect.
	e.do("PATCH", "/v1/campaigns/"+id, e.writeKey, `{"utm_campaign":"summer","status":"paused"}`, 200)
	if got, want := loc("s1"), "https://example.com/a?utm_source=newsletter&utm_campaign=summer"; got != want {
		t.Fatalf("after the change s1 Location %q, want %q", got, want)
	}
	// The change is recorded as a campaign.updated event.
	// (The first event is the creation.)
	evs, err := campaignEvents(e)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events: %v %v", evs, err)
	}
	evs = evs[1:]
	var data struct {
		Campaign map[string]any               `json:"campaign"`
		Changes  map[string]map[string]string `json:"changes"`
	}
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Campaign["id"] != id || data.Changes["utm_campaign"]["from"] != "spring" || data.Changes["utm_campaign"]["to"] != "summer" ||
		data.Changes["status"]["to"] != "paused" || len(data.Changes) != 2 {
		t.Fatalf("event data: %s", evs[0].Data)
	}
	// An update that changes nothing records nothing.
	e.do("PATCH", "/v1/campaigns/"+id, e.writeKey, `{"status":"paused"}`, 200)
	if evs, _ := campaignEvents(e); len(evs) != 2 {
		t.Fatalf("%d events after a no-op update", len(evs))
	}

	// Filter links by campaign; counts.
	r := e.do("GET", "/v1/links?campaign_id="+id, e.readKey, "", 200)
	if r.path("meta", "total") != float64(2) {
		t.Fatalf("links of the campaign: %s", r.raw)
	}
	if got := e.do("GET", "/v1/campaigns/"+id, e.readKey, "", 200).path("links"); got != float64(2) {
		t.Fatalf("links = %v", got)
	}
	if got := len(e.do("GET", "/v1/campaigns", e.readKey, "", 200).path("data").([]any)); got != 1 {
		t.Fatalf("%d campaigns", got)
	}

	// Campaign analytics count its links' clicks.
	e.click("s1", chromeUA, "198.51.100.1", "")
	e.click("s2", chromeUA, "198.51.100.2", "")
	e.click("s3", chromeUA, "198.51.100.3", "")
	e.flush()
	// The Location checks above were clicks too, by a client with no user agent: bots.
	a := e.do("GET", "/v1/analytics/campaigns/"+id+"?range=today&exclude_bots=true", e.readKey, "", 200)
	if a.path("totals", "clicks") != float64(2) || len(topOf(a, "links")) != 2 {
		t.Fatalf("campaign analytics: %s", a.raw)
	}

	// Another workspace sees nothing and cannot join it.
	wantProblem(t, e.request(newRequest("GET", "/v1/campaigns/"+id, e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/campaigns/"+id, e.otherKey, `{"name":"x"}`)), 404, "not_found")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/campaigns/"+id, e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/campaigns/"+id, e.otherKey, "")), 404, "not_found")
	r = e.request(newRequest("POST", "/v1/links", e.otherKey, `{"destination_url":"https://example.com/","campaign_id":"`+id+`"}`))
	wantProblem(t, r, 422, "validation_failed")
	if r.path("errors", 0, "field") != "campaign_id" {
		t.Fatalf("field: %s", r.raw)
	}
	// A read key cannot write.
	wantProblem(t, e.request(newRequest("POST", "/v1/campaigns", e.readKey, `{"name":"x"}`)), 403, "forbidden")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/campaigns/"+id, e.readKey, "")), 403, "forbidden")
	// Bad input.
	for _, body := range []string{`{}`, `{"name":"x","status":"done"}`, `{"name":"x","utm_source":"a\u0001"}`} {
		wantProblem(t, e.request(newRequest("POST", "/v1/campaigns", e.writeKey, body)), 422, "validation_failed")
	}
	wantProblem(t, e.request(newRequest("PATCH", "/v1/campaigns/"+id, e.writeKey, `{"status":"gone"}`)), 422, "validation_failed")

	// Deleting a campaign with links is refused unless detach=true.
	conflict := e.request(newRequest("DELETE", "/v1/campaigns/"+id, e.writeKey, ""))
	wantProblem(t, conflict, 409, "conflict")
	// One link is "it", more are "them".
	if d := conflict.path("detail").(string); strings.Contains(d, " 1 link:") != strings.Contains(d, "move or delete it,") {
		t.Fatalf("delete conflict: %s", d)
	}
	wantProblem(t, e.request(newRequest("DELETE", "/v1/campaigns/"+id+"?detach=maybe", e.writeKey, "")), 400, "invalid_request")
	linkEventsBefore := countEvents(e, "link.updated")
	e.do("DELETE", "/v1/campaigns/"+id+"?detach=true", e.writeKey, "", 204)
	// The delete is recorded, and so is each link it took out of the campaign.
	if got := countEvents(e, "link.updated") - linkEventsBefore; got != 2 {
		t.Fatalf("%d link.updated events for 2 detached links", got)
	}
	evs, _ = campaignEvents(e)
	if last := evs[len(evs)-1]; !strings.Contains(string(last.Data), `"to":"deleted"`) {
		t.Fatalf("delete event: %s", last.Data)
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/campaigns/"+id, e.readKey, "")), 404, "not_found")
	if got := e.do("GET", "/v1/links/"+l1.str("id"), e.readKey, "", 200).path("campaign_id"); got != nil {
		t.Fatalf("campaign_id after detach = %v", got)
	}
	if got, want := loc("s1"), "https://example.com/a"; got != want {
		t.Fatalf("after detach s1 Location %q, want %q", got, want)
	}
	// A link leaves a campaign with an empty campaign_id.
	c2 := e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Two"}`, 201).str("id")
	e.do("PATCH", "/v1/links/"+l1.str("id"), e.writeKey, `{"campaign_id":"`+c2+`"}`, 200)
	e.do("PATCH", "/v1/links/"+l1.str("id"), e.writeKey, `{"campaign_id":""}`, 200)
	e.do("DELETE", "/v1/campaigns/"+c2, e.writeKey, "", 204)
}

// TestLinkEvents: every change of a link writes its event, with the link as
// the API shows it, in the same transaction; a refused change writes none.
func TestLinkEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created","link.updated","link.deleted"]}`, 201)
	before, _ := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 100)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"ev"}`, 201).str("id")
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"tags":["x"]}`, 200)
	e.request(newRequest("PATCH", "/v1/links/"+id, e.writeKey, `{"redirect_code":999}`)) // refused
	e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"ev"}`))
	e.do("DELETE", "/v1/links/"+id, e.writeKey, "", 204)
	evs, err := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	evs = evs[len(before):]
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
		var l map[string]any
		if err := json.Unmarshal(ev.Data, &l); err != nil || l["id"] != id || l["short_url"] != "http://lb.test/ev" {
			t.Fatalf("%s data: %s", ev.Type, ev.Data)
		}
	}
	if got := strings.Join(types, ","); got != "link.created,link.updated,link.deleted" {
		t.Fatalf("events %s", got)
	}
	var upd map[string]any
	json.Unmarshal(evs[1].Data, &upd)
	if tags, _ := upd["tags"].([]any); len(tags) != 1 {
		t.Fatalf("link.updated data is not the link after the change: %s", evs[1].Data)
	}
}

// campaignEvents returns the workspace's campaign.updated events.
func campaignEvents(e *env) ([]*link.Event, error) {
	all, err := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 1000)
	var out []*link.Event
	for _, ev := range all {
		if ev.Type == link.EventCampaignUpdated {
			out = append(out, ev)
		}
	}
	return out, err
}

func countEvents(e *env, eventType string) int {
	all, _ := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 1000)
	n := 0
	for _, ev := range all {
		if ev.Type == eventType {
			n++
		}
	}
	return n
}

// TestDeleteCampaignWithOneLink: the refusal to delete a campaign with one
// link speaks of it as one ("1 link: move or delete it").
func TestDeleteCampaignWithOneLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Solo"}`, 201).str("id")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/solo","campaign_id":"`+id+`"}`, 201)
	r := e.request(newRequest("DELETE", "/v1/campaigns/"+id, e.writeKey, ""))
	wantProblem(t, r, 409, "conflict")
	if d := r.path("detail").(string); !strings.Contains(d, "still has 1 link: move or delete it, or delete with ?detach=true") {
		t.Fatalf("delete conflict: %s", d)
	}
}
