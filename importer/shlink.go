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
	Register("shlink", func(cfg SourceConfig) (Source, error) { return NewShlink(cfg) })
}

// Shlink reads a Shlink instance through its REST API v3 (the X-Api-Key
// header): its short URLs a page at a time and, for each, all of its
// visits, which become dated clicks.
type Shlink struct {
	api *apiClient
	// PageSize is how many short URLs one page asks for; VisitPageSize how
	// many visits.
	PageSize, VisitPageSize int
	// Backoff is the wait before the first retry of a failed request,
	// doubled before each next one.
	Backoff time.Duration
}

// NewShlink opens the Shlink at cfg.URL (its address, as https://s.test)
// with the API key cfg.APIKey.
func NewShlink(cfg SourceConfig) (*Shlink, error) {
	// An address given as the API's own (…/rest or …/rest/v3) is its base.
	api, err := newHeaderKeyClient("Shlink", cfg, "X-Api-Key", "/v3", "/rest")
	if err != nil {
		return nil, err
	}
	return &Shlink{api: api, PageSize: 100, VisitPageSize: 5000, Backoff: defaultBackoff}, nil
}

// Name is "shlink".
func (s *Shlink) Name() string { return "shlink" }

// shlinkShortURL is a short URL as GET /rest/v3/short-urls lists it.
type shlinkShortURL struct {
	ShortCode     string   `json:"shortCode"`
	LongURL       string   `json:"longUrl"`
	DateCreated   string   `json:"dateCreated"`
	Domain        *string  `json:"domain"`
	Title         *string  `json:"title"`
	Tags          []string `json:"tags"`
	VisitsSummary *struct {
		Total int64 `json:"total"`
	} `json:"visitsSummary"`
	VisitsCount *int64 `json:"visitsCount"` // before Shlink 3
}

// shlinkPagination is Shlink's paging block.
type shlinkPagination struct {
	CurrentPage int `json:"currentPage"`
	PagesCount  int `json:"pagesCount"`
}

// shlinkVisit is a visit as GET /rest/v3/short-urls/{shortCode}/visits
// lists it.
type shlinkVisit struct {
	Referer       *string `json:"referer"`
	Date          string  `json:"date"`
	UserAgent     *string `json:"userAgent"`
	VisitLocation *struct {
		CountryCode *string `json:"countryCode"`
	} `json:"visitLocation"`
}

// Each hands over every short URL with all of its visits, a page of short
// URLs at a time.
func (s *Shlink) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	s.api.backoff = s.Backoff
	for page := 1; ; page++ {
		var answer struct {
			ShortURLs *struct {
				Data       []json.RawMessage `json:"data"`
				Pagination shlinkPagination  `json:"pagination"`
			} `json:"shortUrls"`
		}
		q := url.Values{"page": {strconv.Itoa(page)}, "itemsPerPage": {strconv.Itoa(s.PageSize)}}
		what := fmt.Sprintf("GET /rest/v3/short-urls page %d", page)
		if err := s.api.getJSON(ctx, s.api.endpoint("/rest/v3/short-urls", q), what, &answer); err != nil {
			return err
		}
		if answer.ShortURLs == nil {
			return s.api.fail(what + " has no shortUrls; is the address that of a Shlink?")
		}
		for i, raw := range answer.ShortURLs.Data {
			l, rowErr := s.link(raw, page, i)
			if rowErr == nil {
				var err error
				if l.Visits, err = s.visits(ctx, l); err != nil {
					return err
				}
				if n := int64(len(l.Visits)); n > l.Clicks {
					l.Clicks = n // visited between the list and the visits
				}
			}
			if err := fn(l, rowErr); err != nil {
				return err
			}
		}
		p := answer.ShortURLs.Pagination
		if len(answer.ShortURLs.Data) == 0 || p.CurrentPage >= p.PagesCount {
			return nil
		}
	}
}

// link reads one listed short URL.
func (s *Shlink) link(raw json.RawMessage, page, i int) (Link, *RowError) {
	var su shlinkShortURL
	if err := json.Unmarshal(raw, &su); err != nil {
		return Link{}, &RowError{Where: fmt.Sprintf("page %d, short URL %d", page, i+1), Reason: "not a short URL as Shlink lists them (" + jsonProblem(err) + ")"}
	}
	l := Link{Alias: su.ShortCode, URL: su.LongURL, Tags: su.Tags, Key: su.ShortCode}
	if su.Domain != nil && *su.Domain != "" {
		l.Domain = *su.Domain
		l.Key = *su.Domain + "/" + su.ShortCode
	}
	l.Where = "short URL " + l.Key
	if su.Title != nil {
		l.Title = *su.Title
	}
	switch {
	case su.VisitsSummary != nil:
		l.Clicks = su.VisitsSummary.Total
	case su.VisitsCount != nil:
		l.Clicks = *su.VisitsCount
	}
	if su.ShortCode == "" {
		return l, &RowError{Where: fmt.Sprintf("page %d, short URL %d", page, i+1), Reason: "no shortCode"}
	}
	if su.LongURL == "" {
		return l, &RowError{Where: l.Where, Reason: "no longUrl"}
	}
	return l, setCreatedAt(&l, "dateCreated", su.DateCreated)
}

// visits reads all of a short URL's visits, a page at a time, up to
// MaxLinkVisits. A visit without a readable date is left out of them (it
// still counts in the link's total).
func (s *Shlink) visits(ctx context.Context, l Link) ([]Visit, error) {
	if l.Clicks == 0 {
		return nil, nil
	}
	var visits []Visit
	read := 0 // visits listed, dated or not
	for page := 1; ; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "itemsPerPage": {strconv.Itoa(s.VisitPageSize)}}
		if l.Domain != "" {
			q.Set("domain", l.Domain)
		}
		var answer struct {
			Visits *struct {
				Data       []shlinkVisit    `json:"data"`
				Pagination shlinkPagination `json:"pagination"`
			} `json:"visits"`
		}
		what := fmt.Sprintf("GET /rest/v3/short-urls/%s/visits page %d", l.Alias, page)
		if err := s.api.getJSON(ctx, s.api.endpoint("/rest/v3/short-urls/"+url.PathEscape(l.Alias)+"/visits", q), what, &answer); err != nil {
			return nil, err
		}
		if answer.Visits == nil {
			return nil, s.api.fail(what + " has no visits; is the address that of a Shlink?")
		}
		data := answer.Visits.Data[:min(len(answer.Visits.Data), MaxLinkVisits-read)]
		read += len(data)
		for _, v := range data {
			at, err := time.Parse(time.RFC3339, v.Date)
			if err != nil {
				continue
			}
			visit := Visit{At: at.UTC()}
			if v.Referer != nil {
				visit.Referrer = *v.Referer
			}
			if v.UserAgent != nil {
				visit.UserAgent = *v.UserAgent
			}
			if v.VisitLocation != nil && v.VisitLocation.CountryCode != nil {
				visit.Country = countryCode(*v.VisitLocation.CountryCode)
			}
			visits = append(visits, visit)
		}
		p := answer.Visits.Pagination
		if len(answer.Visits.Data) == 0 || p.CurrentPage >= p.PagesCount || read >= MaxLinkVisits {
			return visits, nil
		}
	}
}
