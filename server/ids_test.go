package server

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// neighbourID returns id with its last character changed: the forged
// neighbour an attacker tries next.
func neighbourID(id string) string {
	last := id[len(id)-1]
	next := byte('a')
	if last == 'a' {
		next = 'b'
	}
	return id[:len(id)-1] + string(next)
}

// TestIDsOpaque is the attack of issue 9: IDs were one instance-wide
// sequence (lnk_1 in one workspace, lnk_2 in another), which showed other
// workspaces' volume and let a client guess IDs. Two workspaces create
// links in turn: the IDs show no order and no shared sequence, and a
// forged neighbour of a valid ID is "not found", never another object.
func TestIDsOpaque(t *testing.T) {
	e := newEnv(t)
	var mine, theirs, all []string
	for i := range 10 {
		for _, cred := range []string{e.writeKey, e.otherKey} {
			id := e.do("POST", "/v1/links", cred, `{"destination_url":"https://example.com/`+strconv.Itoa(i)+`"}`, 201).str("id")
			all = append(all, id)
			if cred == e.writeKey {
				mine = append(mine, id)
			} else {
				theirs = append(theirs, id)
			}
		}
	}
	for _, id := range all {
		body, ok := strings.CutPrefix(id, "lnk_")
		if !ok || len(body) != 22 {
			t.Fatalf("id %q: want lnk_ and 22 characters", id)
		}
		if n, err := strconv.ParseUint(body, 36, 64); err == nil {
			t.Fatalf("id %q reads as the number %d", id, n)
		}
	}
	// Sorted, the IDs are not in the order they were made (a chance of
	// 1 in 20! otherwise), and consecutive IDs share no long prefix.
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	if slices.Equal(sorted, all) {
		t.Fatalf("ids sort in creation order: %v", all)
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		n := 0
		for n < len(a) && a[n] == b[n] {
			n++
		}
		if n > len("lnk_")+4 {
			t.Fatalf("%s and %s share %d characters", a, b, n)
		}
	}
	// The list keeps newest first.
	r := e.do("GET", "/v1/links?limit=100", e.readKey, "", 200)
	var listed []string
	for _, l := range r.path("data").([]any) {
		listed = append(listed, l.(map[string]any)["id"].(string))
	}
	want := slices.Clone(mine)
	slices.Reverse(want)
	if got := listed[:len(want)]; !slices.Equal(got, want) {
		t.Fatalf("list %v, want newest first %v", got, want)
	}
	// Forged neighbours of valid IDs (each position changed) are not
	// found, for the owner and for the other workspace; real IDs of the
	// other workspace are not found either.
	// (Requests stay under the free plan's 100 a minute per workspace.)
	for _, tt := range []struct{ id, cred string }{{mine[0], e.readKey}, {theirs[0], e.otherKey}} {
		id := tt.id
		for i := len("lnk_"); i < len(id); i++ {
			c := byte('x')
			if id[i] == 'x' {
				c = 'y'
			}
			forged := id[:i] + string(c) + id[i+1:]
			wantProblem(t, e.request(newRequest("GET", "/v1/links/"+forged, tt.cred, "")), 404, "not_found")
		}
		wantProblem(t, e.request(newRequest("GET", "/v1/links/"+neighbourID(id), tt.cred, "")), 404, "not_found")
	}
	for _, id := range theirs[:5] {
		wantProblem(t, e.request(newRequest("GET", "/v1/links/"+id, e.readKey, "")), 404, "not_found")
	}
	e.do("GET", "/v1/links/"+mine[3], e.readKey, "", 200)
	e.do("GET", "/v1/links/"+theirs[3], e.otherKey, "", 200)

	// Every other kind of ID is opaque too.
	for _, got := range []struct{ prefix, id string }{
		{"usr_", e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")},
		{"ws_", e.ws},
		{"cmp_", e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Spring"}`, 201).str("id")},
		{"key_", e.do("POST", "/v1/keys", e.writeKey, `{"name":"k","scope":"read"}`, 201).str("id")},
		{"wh_", e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201).str("id")},
		{"dom_", e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com"}`, 201).str("id")},
		{"qr_", e.do("POST", "/v1/qr-codes", e.writeKey, `{"link_id":"`+mine[0]+`","name":"q"}`, 201).str("id")},
	} {
		if body, ok := strings.CutPrefix(got.id, got.prefix); !ok || len(body) != 22 {
			t.Errorf("id %q: want %s and 22 characters", got.id, got.prefix)
		}
	}
}
