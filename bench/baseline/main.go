// Command baseline is the yardstick of linkbolt's redirect benchmark: a bare
// net/http handler that answers a 302 from an in-memory map, with no
// storage, no click recording and no routing. bench/redirects.sh runs it
// beside linkbolt and compares requests per second in the same run.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8090", "address")
	n := flag.Int("codes", 1000, "number of codes c0..c<n-1>")
	flag.Parse()
	m := make(map[string]string, *n)
	for i := 0; i < *n; i++ {
		m[fmt.Sprintf("c%d", i)] = fmt.Sprintf("https://example.com/page/%d", i)
	}
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/hook" {
			// A fast webhook receiver for the benchmark with a subscription.
			w.WriteHeader(http.StatusNoContent)
			return
		}
		dest, ok := m[r.URL.Path[1:]]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Location", dest)
		w.WriteHeader(http.StatusFound)
	})))
}
