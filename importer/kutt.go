package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

func init() {
	Register("kutt", func(cfg SourceConfig) (Source, error) { return NewKutt(cfg) })
}

// Kutt reads a Kutt instance through its API v2 (the X-API-KEY header):
// its links 50 at a time (Kutt's most) and, for each link that was
// visited, its stats.
//
// Kutt keeps no single visits its API gives out, only counts: per hour for
// the last 24 hours and per day for the last 30 days, beside browsers,
// countries and referrers over each whole period, which belong to no one
// click. So a link's last 30 days become dated clicks (one an hour for the
// last day, one a day before that, each at the middle of its hour or day,
// without referrer or country), and its older clicks count in its total
// only.
type Kutt struct {
	api *apiClient
	// PageSize is how many links one page asks for (Kutt gives at most 50).
	PageSize int
	// Backoff is the wait before the first retry of a failed request,
	// doubled before each next one.
	Backoff time.Duration
}

// NewKutt opens the Kutt at cfg.URL (its address, as https://kutt.it) with
// the API key cfg.APIKey.
func NewKutt(cfg SourceConfig) (*Kutt, error) {
	// An address given as the API's own (…/api/v2) is its base.
	api, err := newHeaderKeyClient("Kutt", cfg, "X-API-KEY", "/v2", "/api")
	if err != nil {
		return nil, err
	}
	return &Kutt{api: api, PageSize: 50, Backoff: defaultBackoff}, nil
}

// Name is "kutt".
func (k *Kutt) Name() string { return "kutt" }

// kuttLink is a link as GET /api/v2/links lists it.
type kuttLink struct {
	ID          string  `json:"id"`
	Address     string  `json:"address"`
	Target      string  `json:"target"`
	Description *string `json:"description"`
	VisitCount  int64   `json:"visit_count"`
	CreatedAt   string  `json:"created_at"`
	Domain      *string `json:"domain"`
	Password    bool    `json:"password"`
	Banned      bool    `json:"banned"`
}

// kuttStats is what GET /api/v2/links/{id}/stats says of the visits: views
// are counts, oldest first, up to updatedAt.
type kuttStats struct {
	LastDay struct {
		Views []int64 `json:"views"` // 24, an hour each
	} `json:"lastDay"`
	LastMonth struct {
		Views []int64 `json:"views"` // 30, a day each
	} `json:"lastMonth"`
	UpdatedAt string `json:"updatedAt"`
}

// Each hands over every link with the dated clicks of its last 30 days, a
// page of links at a time.
func (k *Kutt) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	k.api.backoff = k.Backoff
	for skip := 0; ; {
		var answer struct {
			Total *int              `json:"total"`
			Data  []json.RawMessage `json:"data"`
		}
		q := url.Values{"skip": {strconv.Itoa(skip)}, "limit": {strconv.Itoa(k.PageSize)}}
		what := fmt.Sprintf("GET /api/v2/links skip %d", skip)
		if err := k.api.getJSON(ctx, k.api.endpoint("/api/v2/links", q), what, &answer); err != nil {
			return err
		}
		if answer.Total == nil || answer.Data == nil {
			return k.api.fail(what + " has no data and total; is the address that of a Kutt?")
		}
		for i, raw := range answer.Data {
			l, rowErr := k.link(raw, skip+i)
			if rowErr == nil && l.Clicks > 0 {
				var err error
				if l.Visits, err = k.visits(ctx, l.Key, l.Where); err != nil {
					return err
				}
				if n := int64(len(l.Visits)); n > l.Clicks {
					l.Clicks = n
				}
			}
			if err := fn(l, rowErr); err != nil {
				return err
			}
		}
		skip += len(answer.Data)
		if len(answer.Data) == 0 || skip >= *answer.Total {
			return nil
		}
	}
}

// link reads one listed link; i counts from 0 over all pages.
func (k *Kutt) link(raw json.RawMessage, i int) (Link, *RowError) {
	var kl kuttLink
	if err := json.Unmarshal(raw, &kl); err != nil {
		return Link{}, &RowError{Where: fmt.Sprintf("link %d", i+1), Reason: "not a link as Kutt lists them (" + jsonProblem(err) + ")"}
	}
	l := Link{Key: kl.ID, Alias: kl.Address, URL: kl.Target, Clicks: kl.VisitCount, Where: "link " + kl.Address}
	if kl.Domain != nil && *kl.Domain != "" {
		l.Domain = *kl.Domain
		l.Where = "link " + l.Domain + "/" + kl.Address
	}
	if kl.Description != nil {
		l.Title = *kl.Description
	}
	switch {
	case kl.ID == "" || kl.Address == "":
		return l, &RowError{Where: fmt.Sprintf("link %d", i+1), Reason: "no id or address"}
	case kl.Target == "":
		return l, &RowError{Where: l.Where, Reason: "no target"}
	case kl.Password:
		// Its API gives out no password; imported without it, a link
		// its owner protected would open to anyone.
		return l, &RowError{Where: l.Where, Reason: "protected by a password at Kutt, which its API does not give out; create it by hand with a password"}
	case kl.Banned:
		return l, &RowError{Where: l.Where, Reason: "banned at Kutt"}
	}
	return l, setCreatedAt(&l, "created_at", kl.CreatedAt)
}

// visits turns a link's stats into its dated clicks: an hour's views of the
// last 24 hours at the middle of their hour, a day's views of the 29 days
// before at the middle of their day.
func (k *Kutt) visits(ctx context.Context, id, where string) ([]Visit, error) {
	var st kuttStats
	what := "GET /api/v2/links/" + id + "/stats"
	if err := k.api.getJSON(ctx, k.api.endpoint("/api/v2/links/"+url.PathEscape(id)+"/stats", nil), what, &st); err != nil {
		return nil, err
	}
	now, err := time.Parse(time.RFC3339, st.UpdatedAt)
	if err != nil || len(st.LastDay.Views) != 24 || len(st.LastMonth.Views) != 30 {
		return nil, k.api.fail(what + " (" + where + ") is not the stats Kutt's API documents (24 hours, 30 days and updatedAt)")
	}
	now = now.UTC()
	var visits []Visit
	add := func(n int64, at time.Time) {
		for ; n > 0 && len(visits) < MaxLinkVisits; n-- {
			visits = append(visits, Visit{At: at})
		}
	}
	// views[i] holds the visits whole hours (days) ago that number
	// len(views)-1-i, as Kutt counts them with date-fns' differenceIn….
	for i, n := range st.LastMonth.Views[:29] {
		daysAgo := time.Duration(29-i) * 24 * time.Hour
		add(n, now.Add(-daysAgo-12*time.Hour))
	}
	for i, n := range st.LastDay.Views {
		hoursAgo := time.Duration(23-i) * time.Hour
		add(n, now.Add(-hoursAgo-30*time.Minute))
	}
	return visits, nil
}
