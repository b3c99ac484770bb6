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
	t.Parallel()
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
	}
	// IDs made one after the other differ almost everywhere, as random
	// strings do: a counter, however encoded, changes a character or two.
	// Two random characters of a 64-letter alphabet are equal 1 time in
	// 64, so of 22 positions some 21 differ; 11 equal ones by chance is
	// below 1 in 10^10.
	wantApart(t, all)
	wantApart(t, mine)
	wantApart(t, theirs)
	// The order they were made in is no order of the IDs: a sequence has
	// no inversions (or all of them, descending), random IDs about half
	// the pairs. For 20 IDs the inversions average 95 with a deviation of
	// 15.4; outside [18, 172] (5 deviations) by chance is below 1 in 10^6.
	// For one workspace's 10, none or all of the 45 is 2 in 10!.
	if n := inversions(all); n < 18 || n > 172 {
		t.Fatalf("%d of 190 pairs of ids out of creation order, want about 95: %v", n, all)
	}
	for _, ids := range [][]string{mine, theirs} {
		if n := inversions(ids); n == 0 || n == 45 {
			t.Fatalf("one workspace's ids are sorted in creation order (%d inversions): %v", n, ids)
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

// wantApart fails unless each ID of ids differs from the one before it in
// at least half the positions of its body.
func wantApart(t *testing.T, ids []string) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		if len(a) != len(b) {
			t.Fatalf("ids %s and %s differ in length", a, b)
		}
		body := len(a) - strings.IndexByte(a, '_') - 1
		differ := 0
		for j := len(a) - body; j < len(a); j++ {
			if a[j] != b[j] {
				differ++
			}
		}
		if differ < body/2 {
			t.Fatalf("ids %s and %s, made one after the other, differ in %d of %d characters", a, b, differ, body)
		}
	}
}

// inversions returns the number of pairs of ids whose order as strings is
// not their order in ids.
func inversions(ids []string) int {
	n := 0
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ids[i] > ids[j] {
				n++
			}
		}
	}
	return n
}
