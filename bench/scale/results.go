package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// results are the figures of one run.
type results struct {
	o options

	seedSecs0              float64 // the N links' creation (seeding)
	createN                int     // the links the creation rate is of
	createSecs, createRate float64

	bulkAbsent     bool
	bulkN          int64
	bulkSecs       float64
	bulkRate       float64
	bulkItemErrors int64
	bulkFirstError string

	wrkCommand       string
	rounds           []round
	sent, counted    int64
	countSecs        float64
	dropped          int64
	heapAfterLoad    int64
	memDuring        procMem // peaks sampled during the load
	memAfter         procMem // once the clicks are written
	analyticsLoad    []latency
	search           []latency
	stopSecs         float64
	fileAfterLoad    int64
	fill, fillSeeded *fillReport
	backdated        int // days the instance was set up before the run
	seeded           int64
	seedSecs         float64
	fileAfterSeed    int64
	restartSecs      float64
	memRestart       procMem
	analyticsSeeded  []latency
	skewed           *wrkRun // the skewed run, when there was one
	dataEnd          int64   // the data's size at the end
	memEnd           procMem // at the end, before the last stop
}

// print writes the details, then the table in the format, then
// the commands that reproduce the run.
func (r *results) print(w io.Writer, srv *server) {
	o := r.o
	fmt.Fprintf(w, "\n## linkbolt at scale on %s: %s links\n\n", o.store, count(int64(o.n)))
	if len(r.rounds) > 0 {
		fmt.Fprintln(w, "Redirect rounds (uniform over all codes):")
		for i, rd := range r.rounds {
			if o.skipBase {
				fmt.Fprintf(w, "  run %d: linkbolt %.0f req/s p99 %s%s\n", i+1, rd.lb.rps, ms(rd.lb.p99), sockNote(rd))
				continue
			}
			fmt.Fprintf(w, "  round %d: linkbolt %.0f req/s p99 %s, baseline %.0f req/s p99 %s, ratio %.2f%s\n",
				i+1, rd.lb.rps, ms(rd.lb.p99), rd.base.rps, ms(rd.base.p99), rd.lb.rps/rd.base.rps, sockNote(rd))
		}
		fmt.Fprintln(w)
	}
	r.printFill(w, "Page fill after the links and the redirect load", r.fill)
	r.printFill(w, fmt.Sprintf("Page fill after %s clicks recorded offline", count(r.seeded)), r.fillSeeded)

	fmt.Fprintf(w, "| figure | %s links |\n|---|---|\n", short(float64(o.n)))
	for _, row := range r.rows() {
		fmt.Fprintf(w, "| %s | %s |\n", row[0], row[1])
	}
	if r.backdated > 0 {
		fmt.Fprintf(w, "\nThe instance was set up offline %d days before the run (so that range=all holds the seeded clicks); links and the load are of today.\n", r.backdated)
	}
	fmt.Fprintf(w, "\nRun: `go run ./bench/scale %s`\n", hidePassword(strings.Join(os.Args[1:], " "), o.pgURL))
	fmt.Fprintf(w, "Server: `%s` with %s\n", srv.bin, hidePassword(strings.Join(srv.env, " "), o.pgURL))
	if r.wrkCommand != "" && o.skipBase {
		fmt.Fprintf(w, "Load: `%s`, %d runs\n", r.wrkCommand, len(r.rounds))
	} else if r.wrkCommand != "" {
		fmt.Fprintf(w, "Load: `%s`, against linkbolt and the baseline (this program, -baseline-serve) in turn, %d rounds\n", r.wrkCommand, len(r.rounds))
	}
}

func sockNote(rd round) string {
	var s []string
	for _, x := range []struct {
		who string
		w   wrkRun
	}{{"linkbolt", rd.lb}, {"baseline", rd.base}} {
		if x.w.sockErrs != "" {
			s = append(s, x.who+" socket errors "+x.w.sockErrs)
		}
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, "; ") + ")"
}

func (r *results) printFill(w io.Writer, title string, f *fillReport) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "%s (bbolt pages of %d bytes; %s free; read in %.1f s):\n", title, f.pageSize, mb(f.free), f.took.Seconds())
	fmt.Fprintf(w, "  %-28s %12s %10s %6s\n", "bucket", "keys", "allocated", "used")
	for _, b := range f.buckets {
		if b.alloc < 1<<20 {
			continue
		}
		fmt.Fprintf(w, "  %-28s %12s %10s %5.0f%%\n", b.name, count(int64(b.keys)), mb(b.alloc), b.percent())
	}
	fmt.Fprintln(w, "  (buckets under 1 MB left out)")
	fmt.Fprintln(w)
}

// rows are the figures of the table, in its order, with what
// this run adds (bulk, clicks counted, the seeded analytics).
func (r *results) rows() [][2]string {
	var rows [][2]string
	add := func(name, format string, args ...any) {
		rows = append(rows, [2]string{name, fmt.Sprintf(format, args...)})
	}
	if len(r.rounds) > 0 && r.o.skipBase {
		lb, _ := r.medianRun()
		add("redirect req/s, uniform over all links", "%s, p99 %s (medians of %d runs)", short(lb.rps), ms(lb.p99), len(r.rounds))
	}
	if r.skewed != nil {
		add("redirect req/s, 90% on 1% of the links", "%s, p99 %s", short(r.skewed.rps), ms(r.skewed.p99))
	}
	if len(r.rounds) > 0 && !r.o.skipBase {
		lb, base := r.medianRun()
		add("redirect req/s, linkbolt / bare baseline", "**%.2f** (%s vs %s; medians of %d rounds each)", lb.rps/base.rps, short(lb.rps), short(base.rps), len(r.rounds))
		add("redirect p99, linkbolt vs baseline", "%s vs %s (%.1f×)", ms(lb.p99), ms(base.p99), float64(lb.p99)/float64(base.p99))
	}
	if len(r.rounds) > 0 {
		diff := count(r.counted - r.sent)
		if r.counted >= r.sent {
			diff = "+" + diff
		}
		add("redirects counted", "%s of %s sent (%s), %s dropped; total unchanged 2 s apart %.0f s after the load", count(r.counted), count(r.sent), diff, count(r.dropped), r.countSecs)
		add("RSS after the redirect load", "%s (RssAnon %s, heap in use %s; RssFile %s); during the load at most RssAnon %s, RssFile %s; VmHWM %s",
			mb(r.memAfter.rssAnon+r.memAfter.rssFile), mb(r.memAfter.rssAnon), mb(r.heapAfterLoad), mb(r.memAfter.rssFile),
			mb(r.memDuring.rssAnon), mb(r.memDuring.rssFile), mb(r.memAfter.hwm))
	}
	if r.fileAfterLoad > 0 {
		add(r.dataName(), "%s for %s links and %s clicks", mb(r.fileAfterLoad), count(int64(r.o.n)), count(r.counted))
	}
	if r.fill != nil {
		add("bucket fill (allocated, used)", "%s", fillSummary(r.fill))
	}
	for _, l := range r.analyticsLoad {
		add("analytics `range="+l.name+"`", "%s", latencyCell(l, "clicks"))
	}
	if r.seeded > 0 {
		add("clicks recorded offline", "%s over %d days in %.0f s (%.0f/s, batches of %s); %s then %s",
			count(r.seeded), r.o.seedDays, r.seedSecs, float64(r.seeded)/r.seedSecs, count(int64(r.o.seedBatch)), r.dataName(), mb(r.fileAfterSeed))
		if r.fillSeeded != nil {
			add("bucket fill with the seeded clicks", "%s", fillSummary(r.fillSeeded))
		}
		for _, l := range r.analyticsSeeded {
			add(fmt.Sprintf("analytics `range=%s`, %s clicks over %d days", l.name, short(float64(r.seeded+r.counted)), r.o.seedDays), "%s", latencyCell(l, "clicks"))
		}
	}
	if len(r.search) > 0 {
		var cells []string
		for _, l := range r.search {
			if l.err != nil {
				cells = append(cells, l.name+" failed: "+l.err.Error())
				continue
			}
			cells = append(cells, fmt.Sprintf("%s %s, p99 %s (%s matches)", l.name, ms(l.median), ms(l.p99), count(l.total)))
		}
		add("`GET /v1/links?search=`, page of 20", "%s", strings.Join(cells, "; "))
	}
	if r.o.seedBulk {
		add("seeding", "%s links through `POST /v1/links/bulk` in %.0f s", count(int64(r.o.n)), r.seedSecs0)
	}
	add(fmt.Sprintf("link creation, %d clients", r.o.clients), "%s/s (%s links in %.0f s)", count(int64(r.createRate+0.5)), count(int64(r.createN)), r.createSecs)
	switch {
	case r.bulkAbsent:
		add("bulk creation (`POST /v1/links/bulk`)", "bulk: route absent")
	case r.bulkN > 0 || r.bulkItemErrors > 0:
		cell := fmt.Sprintf("%s/s (%s links, %s a request, %d clients)", count(int64(r.bulkRate+0.5)), count(r.bulkN), count(bulkSize), r.o.bulkClients)
		if r.bulkItemErrors > 0 {
			cell += fmt.Sprintf("; %d items refused, first: %s", r.bulkItemErrors, r.bulkFirstError)
		}
		add("bulk creation (`POST /v1/links/bulk`)", "%s", cell)
	}
	if r.dataEnd > 0 {
		add(r.dataName()+" at the end", "%s", mb(r.dataEnd))
	}
	if r.restartSecs > 0 {
		add("restart to healthy", "%.2f s (stop %.2f s); RssAnon %s right after", r.restartSecs, r.stopSecs, mb(r.memRestart.rssAnon))
	}
	return rows
}

// medianRun returns the median req/s and the median p99 of the
// linkbolt runs and of the baseline runs.
func (r *results) medianRun() (lb, base wrkRun) {
	pick := func(get func(round) wrkRun) wrkRun {
		rps := make([]float64, len(r.rounds))
		p99 := make([]time.Duration, len(r.rounds))
		for i, rd := range r.rounds {
			rps[i], p99[i] = get(rd).rps, get(rd).p99
		}
		slices.Sort(rps)
		m := rps[len(rps)/2]
		if len(rps)%2 == 0 {
			m = (rps[len(rps)/2-1] + m) / 2
		}
		return wrkRun{rps: m, p99: median(p99)}
	}
	return pick(func(rd round) wrkRun { return rd.lb }), pick(func(rd round) wrkRun { return rd.base })
}

func latencyCell(l latency, unit string) string {
	if l.err != nil {
		return "failed: " + l.err.Error()
	}
	return fmt.Sprintf("%s, p99 %s (%s %s)", ms(l.median), ms(l.p99), count(l.total), unit)
}

// fillSummary names the largest buckets with their size and fill.
func fillSummary(f *fillReport) string {
	var s []string
	for i, b := range f.buckets {
		if i == 6 || b.alloc < 1<<20 {
			break
		}
		s = append(s, fmt.Sprintf("`%s` %s %.0f %%", b.name, mb(b.alloc), b.percent()))
	}
	s = append(s, mb(f.free)+" free")
	return strings.Join(s, "; ")
}

// dataName names what the data takes on disk in the run's store.
func (r *results) dataName() string {
	if r.o.store == "postgres" {
		return "database (`pg_database_size`)"
	}
	return "data file"
}

// writeSummary writes the headline figures to path as name<TAB>value
// lines, in the order bench/stores.sh prints them.
func (r *results) writeSummary(path string) error {
	var b strings.Builder
	put := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%s\t%s\n", name, fmt.Sprintf(format, args...))
	}
	o := r.o
	put("links", "%s", count(int64(o.n)))
	how := "POST /v1/links, 32 clients"
	if o.seedBulk {
		how = fmt.Sprintf("bulk, %d clients", o.bulkClients)
	}
	put(fmt.Sprintf("seeding: %s links (%s)", count(int64(o.n)), how), "%.0f s", r.seedSecs0)
	put(fmt.Sprintf("creation, %d clients (201 read), links/s", o.clients), "%s (%s links)", count(int64(r.createRate+0.5)), count(int64(r.createN)))
	put("clicks in the store for analytics", "%s (%s recorded offline, %s by redirects)", count(r.seeded+r.counted), count(r.seeded), count(r.counted))
	switch {
	case r.bulkAbsent:
		put("bulk creation, links/s", "route absent")
	case r.bulkN > 0:
		put(fmt.Sprintf("bulk creation (%s a request, %d clients), links/s", count(bulkSize), o.bulkClients), "%s%s", count(int64(r.bulkRate+0.5)), refused(r.bulkItemErrors))
	}
	if len(r.rounds) > 0 {
		lb, _ := r.medianRun()
		put("redirects uniform, req/s", "%s", count(int64(lb.rps+0.5)))
		put("redirects uniform, p99", "%s", ms(lb.p99))
	}
	if r.skewed != nil {
		put("redirects skewed (90% on 1%), req/s", "%s", count(int64(r.skewed.rps+0.5)))
		put("redirects skewed, p99", "%s", ms(r.skewed.p99))
	}
	if len(r.rounds) > 0 || r.skewed != nil {
		put("redirects sent / clicks counted", "%s / %s (%s dropped)", count(r.sent), count(r.counted), count(r.dropped))
	}
	an := r.analyticsLoad
	if r.seeded > 0 {
		an = r.analyticsSeeded
	}
	for _, l := range an {
		if l.err != nil {
			put("analytics "+l.name+": median / p99", "failed: %s", snippet([]byte(l.err.Error())))
			continue
		}
		put("analytics "+l.name+": median / p99", "%s / %s (%s clicks in range)", ms(l.median), ms(l.p99), count(l.total))
	}
	for _, l := range r.search {
		if l.err != nil {
			put("search "+l.name+": median / p99", "failed")
			continue
		}
		put("search ("+l.name+"): median / p99", "%s / %s", ms(l.median), ms(l.p99))
	}
	put("RssAnon during / after the load", "%s / %s", mb(r.memDuring.rssAnon), mb(r.memAfter.rssAnon))
	put("VmHWM: creation and redirects / restart to the end", "%s / %s", mb(max(r.memDuring.hwm, r.memAfter.hwm)), mb(r.memEnd.hwm))
	put("RssAnon at the end", "%s", mb(r.memEnd.rssAnon))
	if r.seeded > 0 {
		put("clicks recorded offline", "%s in %.0f s", count(r.seeded), r.seedSecs)
	}
	put("data on disk at the end", "%s", mb(r.dataEnd))
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func refused(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d refused)", n)
}
