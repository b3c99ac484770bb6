package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var keyTests = []test{
	{"CreateAndFind", testKeysFind},
	{"Cap", testKeysCap},
	{"CapUnderConcurrency", testKeysCapConcurrent},
	{"RotateWithGrace", testKeysRotate},
	{"RotateCap", testKeysRotateCap},
	{"RevokeAndExpiry", testKeysRevokeExpiry},
	{"EndedKeysRecorded", testKeysEnded},
	{"Usage", testKeysUsage},
	{"KeepWhenCreatorDisabled", testKeysKeep},
	{"Resources", testKeysResources},
}

func testKeysFind(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	k1 := e.key(ws.ID, "lb_live_one")
	if k1.ID == "" || !k1.CreatedAt.Equal(e.now()) {
		t.Fatalf("created key = %+v", k1)
	}
	e.clock.Add(time.Second)
	k2 := e.key(ws.ID, "lb_live_two")
	k3 := e.key(other.ID, "lb_live_three")
	if k1.ID == k2.ID || k2.ID == k3.ID {
		t.Fatalf("keys share an ID: %s %s %s", k1.ID, k2.ID, k3.ID)
	}
	// A token hash is one key's only.
	wantCode(t, e.Keys.CreateKey(e.ctx, newKey(ws.ID, "lb_live_one"), 0), link.ECONFLICT)
	wantCode(t, e.Keys.CreateKey(e.ctx, newKey("ws_unknown", "lb_live_four"), 0), link.ENOTFOUND)

	got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, k1.ID)
	if err != nil || got.Name != k1.Name || string(got.Hash) != string(k1.Hash) || got.Start != "lb_liv" ||
		got.Scope != link.ScopeReadWrite || got.WorkspaceID != ws.ID || got.State(e.now()) != link.KeyActive {
		t.Fatalf("FindKeyByID = %+v, %v", got, err)
	}
	for _, tt := range [][2]string{{other.ID, k1.ID}, {ws.ID, k3.ID}, {ws.ID, "key_unknown"}, {"ws_unknown", k1.ID}} {
		_, err := e.Keys.FindKeyByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	if got, err := e.Keys.FindKeyByHash(e.ctx, hash("lb_live_three")); err != nil || got.ID != k3.ID || got.WorkspaceID != other.ID {
		t.Fatalf("FindKeyByHash = %+v, %v", got, err)
	}
	_, err = e.Keys.FindKeyByHash(e.ctx, hash("lb_live_nope"))
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Keys.FindKeyByHash(e.ctx, nil)
	wantCode(t, err, link.ENOTFOUND)

	keys, err := e.Keys.FindKeys(e.ctx, ws.ID)
	if err != nil || len(keys) != 2 || keys[0].ID != k2.ID || keys[1].ID != k1.ID {
		t.Fatalf("FindKeys = %v, %v; want k2, k1 (newest first)", keyIDs(keys), err)
	}
	_, err = e.Keys.FindKeys(e.ctx, "ws_unknown")
	wantCode(t, err, link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyCreated}); len(es) != 2 {
		t.Fatalf("%d key.created entries, want 2", len(es))
	}

	e.restart()
	if got, err := e.Keys.FindKeyByHash(e.ctx, hash("lb_live_one")); err != nil || got.ID != k1.ID {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func keyIDs(keys []*link.APIKey) []string {
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids
}

func testKeysCap(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	const max = 3
	// An expired and a revoked key do not count.
	expiring := newKey(ws.ID, "lb_live_expiring")
	expiring.ExpiresAt = ptr(e.now().Add(time.Minute))
	if err := e.Keys.CreateKey(e.ctx, expiring, max); err != nil {
		t.Fatal(err)
	}
	revoked := newKey(ws.ID, "lb_live_revoked")
	if err := e.Keys.CreateKey(e.ctx, revoked, max); err != nil {
		t.Fatal(err)
	}
	if err := e.Keys.RevokeKey(e.ctx, ws.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	for i := range max {
		if err := e.Keys.CreateKey(e.ctx, newKey(ws.ID, fmt.Sprint("lb_live_cap", i)), max); err != nil {
			t.Fatalf("key %d of %d: %v", i+1, max, err)
		}
	}
	wantCode(t, e.Keys.CreateKey(e.ctx, newKey(ws.ID, "lb_live_over"), max), link.ECONFLICT)
	if _, err := e.Keys.FindKeyByHash(e.ctx, hash("lb_live_over")); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a key over the cap was stored: %v", err)
	}
	// Another workspace counts its own; max <= 0 is no cap.
	if err := e.Keys.CreateKey(e.ctx, newKey(other.ID, "lb_live_other"), max); err != nil {
		t.Fatal(err)
	}
	if err := e.Keys.CreateKey(e.ctx, newKey(ws.ID, "lb_live_nocap"), 0); err != nil {
		t.Fatal(err)
	}
}

func testKeysRotate(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	expiry := e.now().Add(30 * 24 * time.Hour)
	old := newKey(ws.ID, "lb_live_old")
	old.ExpiresAt, old.Scope = &expiry, link.ScopeRead
	if err := e.Keys.CreateKey(e.ctx, old, 0); err != nil {
		t.Fatal(err)
	}
	_, err := e.Keys.RotateKey(e.ctx, other.ID, old.ID, &link.APIKey{Hash: hash("x")}, e.now().Add(time.Hour), 0)
	wantCode(t, err, link.ENOTFOUND)

	e.clock.Add(time.Hour)
	grace := e.now().Add(24 * time.Hour)
	next, err := e.Keys.RotateKey(e.ctx, ws.ID, old.ID, &link.APIKey{Hash: hash("lb_live_new"), Start: "lb_new"}, grace, 0)
	if err != nil {
		t.Fatal(err)
	}
	if next.ID == "" || next.ID == old.ID || next.Name != old.Name || next.Scope != link.ScopeRead || next.ExpiresAt == nil ||
		!next.ExpiresAt.Equal(expiry) || next.WorkspaceID != ws.ID || !next.CreatedAt.Equal(e.now()) {
		t.Fatalf("the rotated key's successor = %+v", next)
	}
	got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, old.ID)
	if err != nil || got.ReplacedBy != next.ID || got.GraceEndsAt == nil || !got.GraceEndsAt.Equal(grace) || got.State(e.now()) != link.KeyGrace {
		t.Fatalf("the rotated key = %+v, %v; want in grace until %v", got, err, grace)
	}
	if got, err := e.Keys.FindKeyByHash(e.ctx, hash("lb_live_new")); err != nil || got.ID != next.ID || got.State(e.now()) != link.KeyActive {
		t.Fatalf("the successor by hash = %+v, %v", got, err)
	}
	// Only an active key rotates; a refused rotation stores nothing.
	_, err = e.Keys.RotateKey(e.ctx, ws.ID, old.ID, &link.APIKey{Hash: hash("lb_live_third")}, grace, 0)
	wantCode(t, err, link.ECONFLICT)
	if keys, _ := e.Keys.FindKeys(e.ctx, ws.ID); len(keys) != 2 {
		t.Fatalf("%d keys after a refused rotation, want 2", len(keys))
	}
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyRotated}); len(es) != 1 || es[0].Target.ID != old.ID {
		t.Fatalf("key.rotated entries = %+v; want one, of the old key", es)
	}

	e.restart()
	got, err = e.Keys.FindKeyByID(e.ctx, ws.ID, old.ID)
	if err != nil || got.State(e.now()) != link.KeyGrace {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	e.clock.Set(grace)
	if got, _ := e.Keys.FindKeyByID(e.ctx, ws.ID, old.ID); got.State(e.now()) != link.KeyRevoked {
		t.Fatalf("at the end of its grace the old key is %s, want revoked", got.State(e.now()))
	}
}

func testKeysRotateCap(t *testing.T, e *env) {
	admin, ws := e.setup()
	k := newKey(ws.ID, "lb_live_a")
	k.CreatedBy = link.KeyCreator{Type: link.CreatorUser, ID: admin.ID}
	if err := e.Keys.CreateKey(e.ctx, k, 1); err != nil {
		t.Fatal(err)
	}
	// At the cap of 1, a rotation may reach 2 keys (twice the cap), not 3.
	next, err := e.Keys.RotateKey(e.ctx, ws.ID, k.ID, &link.APIKey{Hash: hash("lb_live_b"), CreatedBy: link.KeyCreator{Type: link.CreatorKey, ID: k.ID}},
		e.now().Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Keys.RotateKey(e.ctx, ws.ID, next.ID, &link.APIKey{Hash: hash("lb_live_c")}, e.now().Add(time.Hour), 1)
	wantCode(t, err, link.ECONFLICT)

	e.restart()
	if got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, k.ID); err != nil || got.CreatedBy != k.CreatedBy {
		t.Fatalf("created_by after a restart = %+v, %v", got, err)
	}
	if got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, next.ID); err != nil || got.CreatedBy != (link.KeyCreator{Type: link.CreatorKey, ID: k.ID}) {
		t.Fatalf("the successor's created_by = %+v, %v", got, err)
	}
}

func testKeysRevokeExpiry(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	k := e.key(ws.ID, "lb_live_revoke")
	if err := e.Keys.RevokeKey(e.ctx, ws.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	revokedAt := e.now()
	e.clock.Add(time.Minute)
	if err := e.Keys.RevokeKey(e.ctx, ws.ID, k.ID); err != nil {
		t.Fatalf("revoking a revoked key: %v", err)
	}
	got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, k.ID)
	if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(revokedAt) || got.State(e.now()) != link.KeyRevoked {
		t.Fatalf("revoked key = %+v, %v; want revoked at %v", got, err, revokedAt)
	}
	// Found by hash in any state, so that the server can say why it fails.
	if got, err := e.Keys.FindKeyByHash(e.ctx, k.Hash); err != nil || got.ID != k.ID || got.RevokedAt == nil {
		t.Fatalf("a revoked key by hash = %+v, %v", got, err)
	}
	_, err = e.Keys.RotateKey(e.ctx, ws.ID, k.ID, &link.APIKey{Hash: hash("lb_live_x")}, e.now().Add(time.Hour), 0)
	wantCode(t, err, link.ECONFLICT)
	wantCode(t, e.Keys.RevokeKey(e.ctx, other.ID, k.ID), link.ENOTFOUND)
	wantCode(t, e.Keys.RevokeKey(e.ctx, ws.ID, "key_unknown"), link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyRevoked}); len(es) != 1 {
		t.Fatalf("%d key.revoked entries, want 1 (a second revoke is a no-op)", len(es))
	}

	soon := e.now().Add(time.Hour)
	exp := newKey(ws.ID, "lb_live_expires")
	exp.ExpiresAt = &soon
	if err := e.Keys.CreateKey(e.ctx, exp, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Keys.FindKeyByID(e.ctx, ws.ID, exp.ID); got.ExpiresAt == nil || !got.ExpiresAt.Equal(soon) || got.State(e.now()) != link.KeyActive {
		t.Fatalf("expiring key = %+v", got)
	}
	e.clock.Add(time.Hour)
	if got, _ := e.Keys.FindKeyByID(e.ctx, ws.ID, exp.ID); got.State(e.now()) != link.KeyExpired {
		t.Fatalf("expiring key at its expiry is %s, want expired", got.State(e.now()))
	}
	_, err = e.Keys.RotateKey(e.ctx, ws.ID, exp.ID, &link.APIKey{Hash: hash("lb_live_y")}, e.now().Add(time.Hour), 0)
	wantCode(t, err, link.ECONFLICT)
}

func testKeysEnded(t *testing.T, e *env) {
	_, ws := e.setup()
	rotated := e.key(ws.ID, "lb_live_rotated")
	grace := e.now().Add(time.Hour)
	if _, err := e.Keys.RotateKey(e.ctx, ws.ID, rotated.ID, &link.APIKey{Hash: hash("lb_live_next")}, grace, 0); err != nil {
		t.Fatal(err)
	}
	expiring := newKey(ws.ID, "lb_live_expiring")
	expiring.ExpiresAt = ptr(e.now().Add(2 * time.Hour))
	if err := e.Keys.CreateKey(e.ctx, expiring, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Keys.RecordEndedKeys(e.ctx, e.now()); err != nil || n != 0 {
		t.Fatalf("RecordEndedKeys before any end = %d, %v; want 0", n, err)
	}
	e.clock.Add(3 * time.Hour)
	if n, err := e.Keys.RecordEndedKeys(e.ctx, e.now()); err != nil || n != 2 {
		t.Fatalf("RecordEndedKeys = %d, %v; want 2", n, err)
	}
	if n, err := e.Keys.RecordEndedKeys(e.ctx, e.now()); err != nil || n != 0 {
		t.Fatalf("RecordEndedKeys again = %d, %v; want 0 (each end is recorded once)", n, err)
	}
	ended := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyGraceEnded})
	if len(ended) != 1 || ended[0].Target.ID != rotated.ID || ended[0].Actor != link.SystemActor || !ended[0].Time.Equal(grace) {
		t.Fatalf("key.grace_ended entries = %+v", ended)
	}
	expired := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyExpired})
	if len(expired) != 1 || expired[0].Target.ID != expiring.ID {
		t.Fatalf("key.expired entries = %+v", expired)
	}
}

func testKeysUsage(t *testing.T, e *env) {
	_, ws := e.setup()
	k := e.key(ws.ID, "lb_live_usage")
	other := e.key(ws.ID, "lb_live_other")
	usage := func(id string) (int64, *time.Time) {
		t.Helper()
		got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return got.RequestCount, got.LastUsedAt
	}
	if n, last := usage(k.ID); n != 0 || last != nil {
		t.Fatalf("a new key's usage = %d, %v", n, last)
	}
	late := e.now().Add(time.Hour)
	e.Keys.TouchKey(k.ID, e.now().Add(time.Minute))
	e.Keys.TouchKey(k.ID, late)
	e.Keys.TouchKey(k.ID, e.now()) // out of order: the last use stays the latest
	e.Keys.TouchKey(other.ID, e.now())
	e.Keys.TouchKey("key_unknown", e.now())
	if n, last := usage(k.ID); n != 3 || last == nil || !last.Equal(late) {
		t.Fatalf("usage = %d, %v; want 3, %v", n, last, late)
	}
	keys, err := e.Keys.FindKeys(e.ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range keys {
		if want := map[string]int64{k.ID: 3, other.ID: 1}[got.ID]; got.RequestCount != want {
			t.Fatalf("FindKeys: key %s counts %d uses, want %d", got.Name, got.RequestCount, want)
		}
	}
	if got, err := e.Keys.FindKeyByHash(e.ctx, k.Hash); err != nil || got.RequestCount != 3 {
		t.Fatalf("FindKeyByHash = %+v, %v", got, err)
	}
	// Close writes the uses counted in memory.
	e.restart()
	if n, last := usage(k.ID); n != 3 || last == nil || !last.Equal(late) {
		t.Fatalf("usage after a restart = %d, %v; want 3, %v", n, last, late)
	}
}

func testKeysKeep(t *testing.T, e *env) {
	admin, ws := e.setup()
	k := e.key(ws.ID, "lb_live_keep")
	got, err := e.Keys.SetKeepWhenCreatorDisabled(e.as(admin, ""), ws.ID, k.ID, true)
	if err != nil || !got.KeepWhenCreatorDisabled || got.ID != k.ID {
		t.Fatalf("SetKeepWhenCreatorDisabled = %+v, %v", got, err)
	}
	if _, err := e.Keys.SetKeepWhenCreatorDisabled(e.ctx, ws.ID, k.ID, true); err != nil {
		t.Fatal(err)
	}
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyUpdated}); len(es) != 1 {
		t.Fatalf("%d key.updated entries, want 1 (setting the same value changes nothing)", len(es))
	}
	_, err = e.Keys.SetKeepWhenCreatorDisabled(e.ctx, ws.ID, "key_unknown", true)
	wantCode(t, err, link.ENOTFOUND)
	e.restart()
	if got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, k.ID); err != nil || !got.KeepWhenCreatorDisabled {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func testKeysCapConcurrent(t *testing.T, e *env) {
	_, ws := e.setup()
	const max, tries = 4, 12
	var wg sync.WaitGroup
	var ok, conflict atomic.Int32
	for i := range tries {
		wg.Go(func() {
			err := e.Keys.CreateKey(e.ctx, newKey(ws.ID, fmt.Sprint("lb_live_race", i)), max)
			switch link.ErrorCode(err) {
			case "":
				ok.Add(1)
			case link.ECONFLICT:
				conflict.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != max || conflict.Load() != tries-max {
		t.Fatalf("%d keys created, %d refused; want %d and %d", ok.Load(), conflict.Load(), max, tries-max)
	}
	if keys, _ := e.Keys.FindKeys(e.ctx, ws.ID); len(keys) != max {
		t.Fatalf("%d keys stored, want %d", len(keys), max)
	}
}

// testKeysResources: a key's resources are kept as given (sorted), found
// by ID and by hash, listed, and given to its replacement by a rotation.
func testKeysResources(t *testing.T, e *env) {
	_, ws := e.setup()
	k := newKey(ws.ID, "lb_live_limited")
	k.Resources = []string{link.ResourceLinks, link.ResourceAnalytics}
	if err := k.Validate(e.now()); err != nil {
		t.Fatal(err)
	}
	if err := e.Keys.CreateKey(e.ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	want := "[analytics links]"
	if got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, k.ID); err != nil || fmt.Sprint(got.Resources) != want {
		t.Fatalf("by ID: %v, %v", got, err)
	}
	if got, err := e.Keys.FindKeyByHash(e.ctx, k.Hash); err != nil || fmt.Sprint(got.Resources) != want {
		t.Fatalf("by hash: %v, %v", got, err)
	}
	plain := e.key(ws.ID, "lb_live_plain")
	if got, _ := e.Keys.FindKeyByID(e.ctx, ws.ID, plain.ID); len(got.Resources) != 0 {
		t.Fatalf("a key without resources has %v", got.Resources)
	}
	next, err := e.Keys.RotateKey(e.ctx, ws.ID, k.ID, &link.APIKey{Hash: hash("lb_live_next"), Start: "lb_next"}, e.now().Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, next.ID); err != nil || fmt.Sprint(got.Resources) != want {
		t.Fatalf("the replacement: %v, %v", got, err)
	}
	all, err := e.Keys.FindKeys(e.ctx, ws.ID)
	if err != nil || len(all) != 3 {
		t.Fatalf("FindKeys: %d, %v", len(all), err)
	}
	for _, got := range all {
		if got.ID != plain.ID && fmt.Sprint(got.Resources) != want {
			t.Fatalf("listed %s with %v", got.ID, got.Resources)
		}
	}
}
