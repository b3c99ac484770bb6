package e2e

import (
	"bytes"
	binenc "encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// stoppedDataFile runs a real server in a new directory, lets prepare
// write through its API, stops it gracefully and returns the data file.
func stoppedDataFile(t *testing.T, prepare func(c client, key string)) string {
	t.Helper()
	dir := t.TempDir()
	p := startBoltChild(t, dir, "50ms")
	c := p.client()
	key, _, _ := setupLink(c)
	if prepare != nil {
		prepare(c, key)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.logs.String())
	}
	return filepath.Join(dir, "linkbolt.db")
}

// inUsePages lists the pages of a bbolt file that are neither free nor
// a header page.
func inUsePages(t *testing.T, path string) []int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages []int
	err = db.View(func(tx *bolt.Tx) error {
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info == nil {
				return nil
			}
			if info.Type != "free" {
				pages = append(pages, id)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// TestProcessDamagedDataFile reproduces the damaged files that crashed
// start-up with a runtime dump (or, empty, started a new instance): each
// now ends the start with one line naming the file, saying it is damaged,
// to restore a backup and that linkbolt check says more, exits non-zero,
// and leaves the file as it was. linkbolt check reports each one.
func TestProcessDamagedDataFile(t *testing.T) {
	t.Parallel()
	// A few links: every bucket fits on one page, as on a young instance,
	// and start-up reads every page in use.
	good := stoppedDataFile(t, func(c client, key string) {
		for i := 0; i < 10; i++ {
			c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/%d"}`, i), 201)
		}
	})
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	rng := rand.New(rand.NewPCG(9, 9))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	used := inUsePages(t, good)
	t.Logf("%d bytes, pages in use: %v", len(orig), used)

	for _, tc := range []struct {
		name   string
		damage func() []byte
	}{
		{"truncated to half", func() []byte { return orig[:len(orig)/2] }},
		{"truncated inside the first page", func() []byte { return orig[:1000] }},
		{"zero length", func() []byte { return nil }},
		{"garbage", func() []byte { return random(64 << 10) }},
		{"random pages overwritten", func() []byte {
			b := bytes.Clone(orig)
			for _, i := range rng.Perm(len(used))[:min(3, len(used))] {
				copy(b[used[i]*pageSize:], random(pageSize))
			}
			return b
		}},
		{"both header pages overwritten", func() []byte {
			b := bytes.Clone(orig)
			copy(b[0:], random(2*pageSize))
			return b
		}},
		{"the free-page list overwritten", func() []byte {
			b := bytes.Clone(orig)
			// Every page of a small file is a bucket root, the free-page
			// list or free; the list is the one whose header says so.
			for id := 2; id*pageSize < len(b); id++ {
				if b[id*pageSize+8] == 0x10 && b[id*pageSize+9] == 0 {
					copy(b[id*pageSize+16:], random(pageSize-16))
				}
			}
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "linkbolt.db")
			damaged := tc.damage()
			if err := os.WriteFile(data, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"LINKBOLT_STORAGE_PATH=" + data, "LINKBOLT_SERVER_LISTEN=" + freePort(t)}
			code, stdout, stderr := runBinary(t, dir, env, "serve")
			if code == 0 {
				t.Fatalf("a %s data file started a server:\n%s%s", tc.name, stdout, stderr)
			}
			line := strings.TrimSpace(stderr)
			for _, want := range []string{data, "is damaged", "restore it from a backup", "`linkbolt check` says more"} {
				if !strings.Contains(line, want) {
					t.Errorf("start-up message lacks %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(line, "\n") || strings.Contains(line, "goroutine") || strings.Contains(line, "fatal error") {
				t.Errorf("start-up did not end with one line:\n%s", stderr)
			}
			if got, _ := os.ReadFile(data); !bytes.Equal(got, damaged) {
				t.Errorf("start-up changed the damaged file")
			}

			code, stdout, stderr = runBinary(t, dir, env, "check")
			if code != 1 || !strings.Contains(stdout, data+" is damaged:\n  - ") || strings.Contains(stderr, "goroutine") {
				t.Errorf("check: exit %d:\n%s%s", code, stdout, stderr)
			}
			t.Logf("check: %s", stdout)
		})
	}

	// The undamaged file checks OK and serves.
	dir := filepath.Dir(good)
	env := []string{"LINKBOLT_STORAGE_PATH=" + good}
	if code, stdout, stderr := runBinary(t, dir, env, "check"); code != 0 || !strings.Contains(stdout, good+" is OK: ") {
		t.Fatalf("check of a good file: exit %d:\n%s%s", code, stdout, stderr)
	}
	startBoltChild(t, dir, "50ms").client().must("GET", "/healthz", "", "", 200)
}

// TestProcessDamagedHeaderPage: a header page overwritten (dd seek=16
// count=64) made bbolt open the file from the other header page without a
// word, losing the last transaction when the damaged page held it. check
// now reports it (exit 1), and serve starts from the other header with
// one WARN line saying the last transaction may be lost.
func TestProcessDamagedHeaderPage(t *testing.T) {
	t.Parallel()
	good := stoppedDataFile(t, func(c client, key string) {
		c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/last"}`, 201)
	})
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	txid := func(page int) uint64 { return binenc.NativeEndian.Uint64(orig[page*4096+16+48:]) }
	rng := rand.New(rand.NewPCG(16, 64))
	for page := 0; page < 2; page++ {
		held := map[bool]string{true: "newer", false: "older"}[txid(page) > txid(1-page)]
		t.Run(fmt.Sprintf("page %d holding the %s header", page, held), func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "linkbolt.db")
			b := bytes.Clone(orig)
			for i := page*4096 + 16; i < page*4096+16+64; i++ {
				b[i] = byte(rng.Uint32())
			}
			if err := os.WriteFile(data, b, 0o600); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("header page %d is damaged", page)
			env := []string{"LINKBOLT_STORAGE_PATH=" + data}
			code, stdout, stderr := runBinary(t, dir, env, "check")
			if code != 1 || !strings.Contains(stdout, data+" is damaged:\n  - "+want) ||
				!strings.Contains(stdout, "the last transaction may be lost") ||
				!strings.Contains(stdout, "the server opens it from the other header page") {
				t.Fatalf("check: exit %d:\n%s%s", code, stdout, stderr)
			}
			p := startBoltChild(t, dir, "50ms")
			p.client().must("GET", "/healthz", "", "", 200)
			var warned []string
			for _, line := range strings.Split(p.logs.String(), "\n") {
				if strings.Contains(line, want) {
					warned = append(warned, line)
				}
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "WARN") || !strings.Contains(warned[0], data) ||
				!strings.Contains(warned[0], "the last transaction may be lost") {
				t.Fatalf("start-up did not warn in one line:\n%s", p.logs.String())
			}
		})
	}
}

// TestProcessLightlyDamagedDataFile: a damaged leaf deep in a big bucket is
// past what start-up reads; the server starts, the requests that read the
// page answer 500 (and are logged), everything else keeps working, and
// linkbolt check names the page.
func TestProcessLightlyDamagedDataFile(t *testing.T) {
	t.Parallel()
	const n = 400
	ids := make([]string, 0, n)
	data := stoppedDataFile(t, func(c client, key string) {
		for i := 0; i < n; i++ {
			l := c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/marker-%03d-%s"}`, i, strings.Repeat("x", 200)), 201)
			ids = append(ids, l["id"].(string))
		}
	})
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	// The leaf holding the last link is the last leaf of the links
	// bucket: never the first under its branch.
	const pageSize = 4096
	var last []byte
	db, err := bolt.Open(data, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("links")).Root() == 0 {
			t.Fatal("the links bucket fits in its parent page")
		}
		_, v := tx.Bucket([]byte("links")).Cursor().Last()
		last = bytes.Clone(v)
		return nil
	})
	db.Close()
	page := -1
	for _, id := range inUsePages(t, data) {
		p := b[id*pageSize : (id+1)*pageSize]
		if p[8] == 0x02 && bytes.Contains(p, last) {
			page = id
		}
	}
	if page < 0 {
		t.Fatal("no leaf holds the last link")
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for i := page * pageSize; i < (page+1)*pageSize; i++ {
		b[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(data, b, 0o600); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Dir(data)
	p := startBoltChild(t, dir, "50ms")
	c := p.client()
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	status, body, _ := c.call("GET", "/v1/links/"+ids[n-1], tok, "")
	if status != 500 || body["code"] != "internal" {
		t.Fatalf("a link on the damaged page: %d %v", status, body)
	}
	c.must("GET", "/v1/links/"+ids[0], tok, "", 200)
	c.must("GET", "/healthz", "", "", 200)
	if !strings.Contains(p.logs.String(), "panic serving request") {
		t.Fatalf("the damaged read is not logged:\n%s", p.logs.String())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()

	code, stdout, stderr := runBinary(t, dir, []string{"LINKBOLT_STORAGE_PATH=" + data}, "check")
	if code != 1 || !strings.Contains(stdout, fmt.Sprintf("page %d ", page)) {
		t.Fatalf("check: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// TestProcessCheckWhileServing: linkbolt check of a data file a server
// holds checks a hot backup taken through the admin API, and leaves no
// temporary file behind.
func TestProcessCheckWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "linkbolt.db")
	p := startBoltChild(t, dir, "50ms")
	setupLink(p.client())
	code, stdout, stderr := runBinary(t, dir, childEnv(p, data), "check")
	if code != 0 || !strings.Contains(stdout, data+" is OK: ") || !strings.Contains(stderr, "checking a hot backup") {
		t.Fatalf("check while serving: exit %d:\n%s%s", code, stdout, stderr)
	}
	if got := backupLeftovers(t, dir); len(got) != 0 {
		t.Fatalf("check left %v", got)
	}
	if code, stdout, _ := runBinary(t, dir, nil, "help"); code != 0 || !strings.Contains(stdout, "linkbolt check") {
		t.Fatalf("help does not list check:\n%s", stdout)
	}
}

// TestProcessClicksOnDamagedPage damages the page new raw clicks are
// written to: the click recorder's write fails (health 503, the clicks
// held and counted) instead of crashing the server, and the rest of the
// API keeps answering.
func TestProcessClicksOnDamagedPage(t *testing.T) {
	t.Parallel()
	const n = 300
	var aliases []string
	data := stoppedDataFile(t, func(c client, key string) {
		for i := 0; i < n; i++ {
			l := c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/page-%03d"}`, i), 201)
			aliases = append(aliases, l["alias"].(string))
		}
		for _, a := range aliases {
			if status, _, _ := c.call("GET", "/"+a, "", ""); status != 302 {
				t.Fatalf("redirect: %d", status)
			}
		}
	})
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	// New clicks go to the end of clicks.raw (keys start with the
	// workspace and the time): damage its last leaf, never the first.
	const pageSize = 4096
	var lastKey []byte
	db, err := bolt.Open(data, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("clicks.raw")).Root() == 0 {
			t.Fatal("clicks.raw fits in its parent page")
		}
		k, _ := tx.Bucket([]byte("clicks.raw")).Cursor().Last()
		lastKey = bytes.Clone(k)
		return nil
	})
	db.Close()
	page := -1
	for _, id := range inUsePages(t, data) {
		p := b[id*pageSize : (id+1)*pageSize]
		if p[8] == 0x02 && bytes.Contains(p, lastKey) {
			page = id
		}
	}
	if page < 0 {
		t.Fatal("no leaf holds the last raw click")
	}
	rng := rand.New(rand.NewPCG(7, 3))
	for i := page*pageSize + 16; i < (page+1)*pageSize; i++ {
		b[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(data, b, 0o600); err != nil {
		t.Fatal(err)
	}

	p := startBoltChild(t, filepath.Dir(data), "20ms")
	c := p.client()
	for _, a := range aliases[:20] {
		if status, _, _ := c.call("GET", "/"+a, "", ""); status != 302 {
			t.Fatalf("redirect on a damaged file: %d\n%s", status, p.logs.String())
		}
	}
	waitHealth(t, p.addr, 503)
	c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	if m := scrapeMetrics(t, p.addr); m["linkbolt_clicks_pending"] != 20 || m["linkbolt_click_writes_failed_total"] < 1 {
		t.Fatalf("metrics on a damaged page: pending %v, failed writes %v", m["linkbolt_clicks_pending"], m["linkbolt_click_writes_failed_total"])
	}
	if p.cmd.ProcessState != nil {
		t.Fatalf("the server exited:\n%s", p.logs.String())
	}
}
