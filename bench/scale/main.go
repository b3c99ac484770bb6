// Command scale is linkbolt's benchmark at scale: it builds the binary,
// runs it on a fresh data file, creates N links through the API from 32
// clients (and through the bulk route when the binary has one), spreads
// redirects uniformly over all N codes with wrk, alternating with a bare
// net/http server holding the same codes, and prints every figure of the
// "million links" table: redirect throughput and p99 against the
// baseline, whether every redirect was counted, memory (/proc/PID/status)
// during and after the load, the data file's size and page fill per
// bucket, analytics and search latency, and restart to healthy. An
// offline step records millions of clicks spread over 90 days through the
// storage package while the server is stopped, so analytics can be
// measured over a quarter's clicks without sending them.
//
//	go run ./bench/scale -n 1000000            # the reference run
//	go run ./bench/scale -n 20000 -seed-clicks 200000 -rounds 2 -duration 5s
//
// It needs wrk on the PATH. Numbers depend on the machine; run it on an
// otherwise idle one.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the command line: what to measure and how hard.
type options struct {
	n            int
	clients      int
	bulkN        int
	bulkClients  int
	rounds       int
	duration     time.Duration
	wrkThreads   int
	wrkConns     int
	seedClicks   int
	seedDays     int
	seedBatch    int
	seedWriters  int
	seedFor      time.Duration
	gets         int
	scanLimit    int
	port         int
	basePort     int
	bin          string
	src          string
	keep         bool
	skipRedirect bool
	skipSeed     bool
	skipFill     bool
	skipSearch   bool
	skipRestart  bool
	skipBulk     bool
	seedBulk     bool
	createN      int
	skipBase     bool
	skewFor      time.Duration
	store        string
	pgURL        string
	summary      string
}

func main() {
	var o options
	serve := flag.String("baseline-serve", "", "internal: serve the bare baseline on `ADDR` for -n codes and nothing else")
	flag.IntVar(&o.n, "n", 1_000_000, "links created through the API (aliases m0 .. mN-1), the codes the redirects spread over")
	flag.IntVar(&o.clients, "clients", 32, "concurrent clients creating links")
	flag.IntVar(&o.bulkN, "bulk-n", -1, "links created through POST /v1/links/bulk at the end, aliases b0 ..; -1 means n/10")
	flag.IntVar(&o.bulkClients, "bulk-clients", 4, "concurrent bulk requests of 1,000 links")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of wrk against linkbolt and against the baseline, alternating")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each wrk run")
	flag.IntVar(&o.wrkThreads, "wrk-threads", 2, "wrk threads")
	flag.IntVar(&o.wrkConns, "wrk-conns", 64, "wrk connections")
	flag.IntVar(&o.seedClicks, "seed-clicks", 10_000_000, "clicks recorded offline over -seed-days (0: none)")
	flag.IntVar(&o.seedDays, "seed-days", 90, "the days the offline clicks spread over, ending now")
	flag.IntVar(&o.seedBatch, "seed-batch", 10_000, "clicks per offline write transaction (one server flush of a busy second)")
	flag.IntVar(&o.seedWriters, "seed-writers", 1, "concurrent offline click writers (PostgreSQL takes several transactions at once; bbolt one)")
	flag.DurationVar(&o.seedFor, "seed-for", 0, "stop recording offline clicks after this long, with fewer than -seed-clicks (0: no limit); the batches then go in an order that spreads any first part of them over all of -seed-days")
	flag.IntVar(&o.gets, "gets", 5, "GETs per analytics range and scope, and per kind of search term (the median and p99 are reported; a series stops after a minute)")
	flag.IntVar(&o.scanLimit, "search-scan-limit", 0, "server.search_scan_limit for the run (0: search reads every link, as a full search must)")
	flag.IntVar(&o.port, "port", 18611, "linkbolt's port on 127.0.0.1")
	flag.IntVar(&o.basePort, "baseline-port", 18612, "the baseline's port on 127.0.0.1")
	flag.StringVar(&o.bin, "bin", "", "run this prebuilt linkbolt binary instead of building one (e.g. to compare two versions)")
	flag.StringVar(&o.src, "src", ".", "the linkbolt module to build")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (data file, server log)")
	flag.BoolVar(&o.skipRedirect, "skip-redirects", false, "skip the wrk rounds (and the click count)")
	flag.BoolVar(&o.skipSeed, "skip-seed-clicks", false, "skip the offline click seeding (same as -seed-clicks 0)")
	flag.BoolVar(&o.skipFill, "skip-fill", false, "skip reading bbolt's page fill per bucket")
	flag.BoolVar(&o.skipSearch, "skip-search", false, "skip the search latency")
	flag.BoolVar(&o.skipRestart, "skip-restart", false, "skip the stop, seeding, fill and restart (and everything measured after)")
	flag.BoolVar(&o.skipBulk, "skip-bulk", false, "skip the bulk route")
	flag.BoolVar(&o.seedBulk, "seed-bulk", false, "create the N links through POST /v1/links/bulk (-bulk-clients, 1,000 a request) instead of POST /v1/links; -create-n then measures POST /v1/links")
	flag.IntVar(&o.createN, "create-n", -1, "after the N links, create this many more (c0 ..) through POST /v1/links from -clients clients to measure creation at scale; -1 means 50,000 with -seed-bulk, else 0")
	flag.BoolVar(&o.skipBase, "skip-baseline", false, "run wrk against linkbolt only, not against the bare baseline")
	flag.DurationVar(&o.skewFor, "skewed", 0, "after the uniform rounds, one wrk run this long with 90% of the GETs on 1% of the codes (0: none)")
	flag.StringVar(&o.store, "store", "bbolt", "the store linkbolt runs on: bbolt (a data file in the temporary directory) or postgres (-postgres-url)")
	flag.StringVar(&o.pgURL, "postgres-url", "", "with -store postgres: an empty database linkbolt gets as storage.postgres_url (bench/scale.sh postgres starts one)")
	flag.StringVar(&o.summary, "summary", "", "also write the headline figures to `FILE` as name<TAB>value lines (bench/stores.sh reads them)")
	flag.Parse()
	if *serve != "" {
		serveBaseline(*serve, o.n)
		return
	}
	if o.bulkN < 0 {
		o.bulkN = o.n / 10
	}
	if o.createN < 0 {
		o.createN = 0
		if o.seedBulk {
			o.createN = 50_000
		}
	}
	if o.skipSeed {
		o.seedClicks = 0
	}
	if o.store == "postgres" {
		o.skipFill = true // bbolt's pages; PostgreSQL's size is pg_database_size
	}
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// check refuses options the phases cannot run with.
func (o options) check() error {
	switch {
	case o.seedBulk && o.createN < 1:
		return fmt.Errorf("-seed-bulk needs -create-n of at least 1: the creation rate is measured there")
	case o.n < 1 || o.clients < 1 || o.bulkClients < 1 || o.gets < 1:
		return fmt.Errorf("-n, -clients, -bulk-clients and -gets must be at least 1")
	case o.rounds < 1 || o.duration < time.Second || o.wrkThreads < 1 || o.wrkConns < o.wrkThreads:
		return fmt.Errorf("-rounds must be at least 1, -duration at least 1s, -wrk-conns at least -wrk-threads")
	case o.seedClicks < 0 || o.seedBatch < 1 || o.seedDays < 1 || o.seedWriters < 1:
		return fmt.Errorf("-seed-clicks must not be negative, -seed-batch, -seed-days and -seed-writers at least 1")
	case o.seedClicks > 0 && o.seedClicks/o.seedBatch > o.seedDays*24*3600:
		return fmt.Errorf("-seed-clicks: more batches than seconds in -seed-days; raise -seed-batch")
	case o.store != "bbolt" && o.store != "postgres":
		return fmt.Errorf("-store %q: bbolt or postgres", o.store)
	case o.store == "postgres" && o.pgURL == "":
		return fmt.Errorf("-store postgres needs -postgres-url (bench/scale.sh N SECS postgres starts a throwaway cluster)")
	case o.store == "bbolt" && o.pgURL != "":
		return fmt.Errorf("-postgres-url is for -store postgres")
	case o.skewFor != 0 && o.skewFor < time.Second:
		return fmt.Errorf("-skewed must be 0 or at least 1s")
	}
	return nil
}

// logf reports progress on stderr; the figures go to stdout.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// run measures everything in order, on one data file: creation, the
// redirect load and its clicks, analytics and search, then a stop, the
// page fill and the offline clicks, a restart, analytics again, and the
// bulk route last so that every figure before it is of exactly N links.
func run(ctx context.Context, o options) error {
	tmp, err := os.MkdirTemp("", "linkbolt-scale-")
	if err != nil {
		return err
	}
	if o.keep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin, err := buildBinary(ctx, o, tmp)
	if err != nil {
		return err
	}
	r := &results{o: o}
	srv := newServer(bin, tmp, o)
	if o.seedClicks > 0 && !o.skipRestart {
		// range=all starts at the workspace's creation: make it older
		// than the clicks to be seeded.
		if err := setUpBackdated(ctx, o, srv.dataPath, o.seedDays+1); err != nil {
			return err
		}
		r.backdated = o.seedDays + 1
	}
	if _, err := srv.start(ctx); err != nil {
		return err
	}
	defer srv.kill()
	a, err := login(ctx, srv.base)
	if err != nil {
		return err
	}
	var ids []string
	if o.seedBulk {
		if ids, r.seedSecs0, err = seedBulk(ctx, a, o); err != nil {
			return err
		}
	} else {
		if ids, r.seedSecs0, err = createLinks(ctx, a, o, "m", o.n); err != nil {
			return err
		}
		r.createN, r.createSecs = o.n, r.seedSecs0
	}
	if o.createN > 0 {
		// Creation at scale, N links already there; these are left out
		// of the redirects, analytics and search.
		if _, r.createSecs, err = createLinks(ctx, a, o, "c", o.createN); err != nil {
			return err
		}
		r.createN = o.createN
	}
	r.createRate = float64(r.createN) / r.createSecs
	if !o.skipRedirect {
		if err := redirectLoad(ctx, a, srv, o, tmp, r); err != nil {
			return err
		}
	}
	r.analyticsLoad = analyticsLatency(ctx, a, o.gets, ids[0])
	if !o.skipSearch {
		r.search = searchLatency(ctx, a, o)
	}
	if !o.skipRestart {
		if err := restart(ctx, a, srv, o, ids, r); err != nil {
			return err
		}
	}
	if !o.skipBulk && o.bulkN > 0 {
		if err := bulkCreate(ctx, a, o, r); err != nil {
			return err
		}
	}
	r.memEnd, _ = readStatus(srv.pid())
	if err := srv.stop(); err != nil {
		logf("stop: %v", err)
	}
	r.dataEnd = dataSize(ctx, o, srv.dataPath)
	r.print(os.Stdout, srv)
	if o.summary != "" {
		return r.writeSummary(o.summary)
	}
	return nil
}

// restart stops the server with SIGTERM, reads the page fill, records the
// offline clicks, starts it again and times it to healthy, then measures
// analytics over the clicks now held.
func restart(ctx context.Context, a *apiClient, srv *server, o options, ids []string, r *results) error {
	wid, err := a.workspaceID(ctx)
	if err != nil {
		return err
	}
	t := time.Now()
	if err := srv.stop(); err != nil {
		return err
	}
	r.stopSecs = time.Since(t).Seconds()
	r.fileAfterLoad = dataSize(ctx, o, srv.dataPath)
	logf("stopped in %.2f s; data %s", r.stopSecs, mb(r.fileAfterLoad))
	if !o.skipFill {
		if r.fill, err = pageFill(srv.dataPath); err != nil {
			return err
		}
	}
	if o.seedClicks > 0 {
		if err := seedClicks(ctx, srv.dataPath, wid, ids, o, r); err != nil {
			return err
		}
		r.fileAfterSeed = dataSize(ctx, o, srv.dataPath)
		if !o.skipFill {
			if r.fillSeeded, err = pageFill(srv.dataPath); err != nil {
				return err
			}
		}
	}
	healthy, err := srv.start(ctx)
	if err != nil {
		return err
	}
	r.restartSecs = healthy.Seconds()
	r.memRestart, _ = readStatus(srv.pid())
	logf("healthy %.3f s after the start; RssAnon %s", r.restartSecs, mb(r.memRestart.rssAnon))
	if o.seedClicks > 0 {
		r.analyticsSeeded = analyticsLatency(ctx, a, o.gets, ids[0])
	}
	return nil
}

// mb formats a byte count for a person.
func mb(n int64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	}
}

// count formats a count with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// short formats a rate like 28k or 6,700.
func short(f float64) string {
	if f >= 10_000 {
		return fmt.Sprintf("%.0fk", f/1000)
	}
	return count(int64(f + 0.5))
}
