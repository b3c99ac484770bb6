package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// init registers the API as "yourls-api": "yourls" is its CSV export. A
// route or command given --from yourls with an address opens this one.
func init() {
	Register("yourls-api", func(cfg SourceConfig) (Source, error) { return NewYOURLSAPI(cfg) })
}

// YOURLSAPI reads a YOURLS instance through its API (yourls-api.php,
// action=stats, newest first, a page at a time). YOURLS's API gives each
// link's click total but not its clicks: the yourls_log table, exported as
// CSV beside yourls_url, is how dated clicks come over.
//
// Its key is the instance's secret signature token, or "username:password".
type YOURLSAPI struct {
	api *apiClient
	// PageSize is how many links one page asks for.
	PageSize int
	// Backoff is the wait before the first retry of a failed request,
	// doubled before each next one.
	Backoff time.Duration
	// auth is the signature, or the username and password, for the query.
	auth url.Values
}

// NewYOURLSAPI opens the YOURLS whose API is at cfg.URL (its
// yourls-api.php, or the address it is installed at) with cfg.APIKey.
func NewYOURLSAPI(cfg SourceConfig) (*YOURLSAPI, error) {
	api, err := newAPIClient("YOURLS", cfg, func(*http.Request) {})
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(api.base.Path, ".php") {
		api.base.Path = strings.TrimSuffix(api.base.Path, "/") + "/yourls-api.php"
	}
	key := strings.TrimSpace(cfg.APIKey)
	auth := url.Values{"signature": {key}}
	if user, password, ok := strings.Cut(key, ":"); ok {
		auth = url.Values{"username": {user}, "password": {password}}
	}
	return &YOURLSAPI{api: api, PageSize: 500, Backoff: defaultBackoff, auth: auth}, nil
}

// Name is "yourls", as --from takes it: the API and the CSV export name a
// link by the same keyword.
func (y *YOURLSAPI) Name() string { return "yourls" }

// yourlsAPIStats is YOURLS's answer to action=stats in JSON: links as an
// object of link_1, link_2, … (absent when there are none) and the totals.
type yourlsAPIStats struct {
	Links map[string]json.RawMessage `json:"links"`
	Stats *struct {
		TotalLinks flexInt `json:"total_links"`
	} `json:"stats"`
}

// yourlsAPILink is one link of action=stats; its numbers come as strings.
type yourlsAPILink struct {
	ShortURL  string  `json:"shorturl"`
	URL       string  `json:"url"`
	Title     string  `json:"title"`
	Timestamp string  `json:"timestamp"`
	Clicks    flexInt `json:"clicks"`
}

// flexInt reads a JSON number or a string holding one, as PHP writes them.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s is not a whole number", b)
	}
	*n = flexInt(v)
	return nil
}

// Each hands over every link, newest first. YOURLS orders a page by
// creation time alone, so links made in the same second may move between
// pages: a link read twice is handed over once, and when fewer links were
// read than YOURLS counts, a row error says so.
func (y *YOURLSAPI) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	y.api.backoff = y.Backoff
	seen := map[string]bool{} // the keywords listed so far
	unreadable := int64(0)    // links listed without a keyword
	total := int64(-1)
	for start := 0; ; start += y.PageSize {
		q := url.Values{"action": {"stats"}, "filter": {"last"}, "limit": {strconv.Itoa(y.PageSize)}, "start": {strconv.Itoa(start)}, "format": {"json"}}
		for k, v := range y.auth {
			q[k] = v
		}
		var answer yourlsAPIStats
		what := fmt.Sprintf("action=stats start %d", start)
		if err := y.api.getJSON(ctx, y.api.endpoint("", q), what, &answer); err != nil {
			return err
		}
		if answer.Stats == nil {
			return y.api.fail(what + " has no stats; is the address that of a YOURLS's yourls-api.php?")
		}
		if total < 0 {
			total = int64(answer.Stats.TotalLinks)
		}
		for _, raw := range inOrder(answer.Links) {
			l, rowErr := y.link(raw.value, start+raw.n)
			switch {
			case l.Key == "":
				unreadable++
			case seen[l.Key]:
				continue
			default:
				seen[l.Key] = true
			}
			if err := fn(l, rowErr); err != nil {
				return err
			}
		}
		if len(answer.Links) < y.PageSize {
			break
		}
	}
	if n := int64(len(seen)) + unreadable; n < total {
		return fn(Link{}, &RowError{Where: "YOURLS's API", Reason: fmt.Sprintf("YOURLS counts %d links but listed %d: links made in the same second can slip between its pages; run the import again, or import its yourls_url table as CSV", total, n)})
	}
	return nil
}

// numbered is one link_N of a page.
type numbered struct {
	n     int
	value json.RawMessage
}

// inOrder lists a page's link_1, link_2, … in their order.
func inOrder(links map[string]json.RawMessage) []numbered {
	out := make([]numbered, 0, len(links))
	for name, v := range links {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, "link_"))
		out = append(out, numbered{n, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out
}

// link reads one listed link; i counts from 1 over all pages.
func (y *YOURLSAPI) link(raw json.RawMessage, i int) (Link, *RowError) {
	var yl yourlsAPILink
	where := fmt.Sprintf("link %d", i)
	if err := json.Unmarshal(raw, &yl); err != nil {
		return Link{}, &RowError{Where: where, Reason: "not a link as YOURLS lists them (" + jsonProblem(err) + ")"}
	}
	keyword := ""
	if u, err := url.Parse(yl.ShortURL); err == nil && u.Path != "" {
		keyword = path.Base(u.Path)
	}
	if keyword == "" || keyword == "/" || keyword == "." {
		return Link{}, &RowError{Where: where, Reason: "shorturl " + strconv.Quote(yl.ShortURL) + " has no keyword"}
	}
	l := Link{Key: keyword, Alias: keyword, URL: yl.URL, Title: yl.Title, Clicks: int64(yl.Clicks), Where: "short URL " + keyword}
	if yl.URL == "" {
		return l, &RowError{Where: l.Where, Reason: "no url"}
	}
	if yl.Timestamp != "" {
		t, err := time.Parse(time.DateTime, yl.Timestamp)
		if err != nil {
			return l, &RowError{Where: l.Where, Reason: "timestamp " + strconv.Quote(yl.Timestamp) + " is not a YYYY-MM-DD hh:mm:ss date"}
		}
		l.CreatedAt = t
	}
	return l, nil
}
