package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// A search is answered by the trigram index links_search (pg_trgm): for
// `search_text LIKE '%term%'` PostgreSQL intersects the index's lists of
// every trigram of the term. The trigrams that many links hold ("exa",
// "com", "htt" of a destination host) have lists as long as the table:
// at a million links, a host search read 1,900 index pages for them, 17
// ms, for 240 matches. So the index is driven by the term without the
// words whose every trigram is common, in 2% of the links or more
// (drivePattern), a pattern every
// match also matches, and the whole term is tested on the rows it names:
// 260 pages, 2 ms.
//
// What is common is learned from a sample of the links' search texts
// (trigramStats), read at the first search and again in the background
// when it is older than trigramStatsAge. The sample only steers the
// plan: whatever it holds, a search answers the same links.

// commonShare is the share of links a trigram is in for it to be common.
const commonShare = 0.02

// trigramSample is the number of links sampled; trigramStatsAge how long
// a sample is used before it is read again.
const (
	trigramSample   = 5000
	trigramStatsAge = 10 * time.Minute
)

// minTrigramSample is the fewest links a sample must hold to tell what is
// common: fewer links are searched as fast without steering, and are
// sampled again at the next search (errSmallSample).
const minTrigramSample = 100

var errSmallSample = errors.New("too few links to sample")

// trigramStats holds the trigrams common among the links' search texts.
type trigramStats struct {
	mu      sync.Mutex
	common  map[string]bool // nil: not read yet
	at      time.Time
	loading bool
}

// commonTrigrams returns the common trigrams of the last sample, reading
// one first when there is none (nil if that fails), or in the background
// when it is old.
func (s *LinkService) commonTrigrams(ctx context.Context) map[string]bool {
	st := &s.trgmStats
	st.mu.Lock()
	common, at, loading := st.common, st.at, st.loading
	stale := common == nil || s.db.now().Sub(at) > trigramStatsAge
	if stale && !loading && common != nil {
		st.loading = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s.loadTrigramStats(ctx)
		}()
	}
	st.mu.Unlock()
	if common != nil {
		return common
	}
	// The first search waits for the sample (a few milliseconds).
	st.mu.Lock()
	if st.loading {
		st.mu.Unlock()
		return nil
	}
	st.loading = true
	st.mu.Unlock()
	return s.loadTrigramStats(ctx)
}

// loadTrigramStats samples the links' search texts and keeps their
// common trigrams; st.loading is set, and cleared here.
func (s *LinkService) loadTrigramStats(ctx context.Context) map[string]bool {
	common, err := s.sampleTrigrams(ctx)
	st := &s.trgmStats
	st.mu.Lock()
	defer st.mu.Unlock()
	st.loading = false
	if err != nil {
		return st.common
	}
	st.common, st.at = common, s.db.now()
	return common
}

// sampleTrigrams reads about trigramSample links' search texts (a sample
// of the table's pages) and returns the trigrams in at least commonShare
// of them.
func (s *LinkService) sampleTrigrams(ctx context.Context) (map[string]bool, error) {
	var rows float64
	if err := s.db.pool.QueryRow(ctx, `SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'links'::regclass`).Scan(&rows); err != nil {
		return nil, err
	}
	pct := 100.0
	if rows > trigramSample {
		pct = max(100*2*trigramSample/rows, 0.001) // pages are sampled: read twice as many rows' worth
	}
	r, err := s.db.pool.Query(ctx, `SELECT search_text FROM links TABLESAMPLE SYSTEM ($1) LIMIT $2`, pct, trigramSample)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	counts := map[string]int{}
	n := 0
	seen := map[string]bool{}
	for r.Next() {
		var text string
		if err := r.Scan(&text); err != nil {
			return nil, err
		}
		n++
		clear(seen)
		for _, w := range trigramWords(text) {
			for _, t := range wordTrigrams(w, true, true) {
				if !seen[t] {
					seen[t] = true
					counts[t]++
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if n < minTrigramSample {
		return nil, errSmallSample
	}
	common := map[string]bool{}
	for t, c := range counts {
		if float64(c) >= commonShare*float64(n) {
			common[t] = true
		}
	}
	return common, nil
}

// wordChar reports whether c belongs to a word as pg_trgm splits text:
// ASCII letters and digits here (a search with other letters is not
// steered: see drivePattern).
func wordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'
}

// trigramWords returns the words of lower-case text, as pg_trgm splits
// it for its trigrams.
func trigramWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool { return r > 127 || !wordChar(byte(r)) })
}

// wordTrigrams returns the trigrams pg_trgm makes of word w: padded with
// two blanks before it when it starts after a separator (left) and one
// after it when it ends before one (right), as in a text; a word of a
// LIKE pattern next to a wildcard is not padded on that side.
func wordTrigrams(w string, left, right bool) []string {
	if left {
		w = "  " + w
	}
	if right {
		w += " "
	}
	var out []string
	for i := 0; i+3 <= len(w); i++ {
		out = append(out, w[i:i+3])
	}
	return out
}

// drivePattern returns the LIKE pattern (escaped) that steers the index
// for a search of term (lower case): term with each word whose every
// trigram is common replaced by a wildcard, and ok false when nothing
// would be left out, or no word left has a trigram (pg_trgm would find
// nothing to look up and read the whole index; a word's padding where a
// separator of the term is next to it counts, as "w5." looks up "w5 "),
// or the term has characters other than ASCII (pg_trgm's words then
// depend on the database's locale).
func drivePattern(term string, common map[string]bool) (string, bool) {
	if len(common) == 0 {
		return "", false
	}
	type part struct {
		text   string
		word   bool
		common bool
	}
	var parts []part
	for i := 0; i < len(term); {
		if term[i] > 127 {
			return "", false
		}
		j, word := i, wordChar(term[i])
		for j < len(term) && term[j] <= 127 && wordChar(term[j]) == word {
			j++
		}
		parts = append(parts, part{text: term[i:j], word: word})
		i = j
	}
	dropped, looked := false, false // a word left out; a word left in that the index looks up
	for k := range parts {
		p := &parts[k]
		if !p.word {
			continue
		}
		// Padded where a separator of the term is next to it.
		trigrams := wordTrigrams(p.text, k > 0, k < len(parts)-1)
		p.common = true
		for _, t := range trigrams {
			if !common[t] {
				p.common = false
				break
			}
		}
		if p.common {
			dropped = true
		} else if len(trigrams) > 0 {
			looked = true
		}
	}
	if !dropped || !looked {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('%')
	wild := true // the last thing written is a wildcard
	for _, p := range parts {
		if p.common {
			if !wild {
				b.WriteByte('%')
				wild = true
			}
			continue
		}
		b.WriteString(escapeLike(p.text))
		wild = false
	}
	if !wild {
		b.WriteByte('%')
	}
	return b.String(), true
}
