package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/linkbolt/linkbolt/importer"
	"github.com/linkbolt/linkbolt/link"
)

// costlyImport is the class of imports in the costly-work gate.
const costlyImport = "import"

// Limits of the import route: a body holds a whole exported file, the
// answer at most maxImportItems rows (the counts go on).
const (
	maxImportBody  = 32 << 20
	maxImportItems = 1000
	// maxImportLinks bounds the rows one request imports, skips or fails
	// (see importer.Options.MaxLinks), so that a source whose pages never
	// end ends; the next run carries on.
	maxImportLinks = 1_000_000
)

func (s *Server) importRoutes() {
	s.handle("POST", "/v1/imports", accessWrite, s.handleImport)
}

type importRequest struct {
	From       string   `json:"from"`
	DryRun     bool     `json:"dry_run"`
	OnConflict string   `json:"on_conflict"`
	Data       bodyText `json:"data"`
	LogData    bodyText `json:"log_data"`
	URL        string   `json:"url"`
	APIKey     string   `json:"api_key"`
}

type importItemResponse struct {
	Where  string `json:"where"`
	Key    string `json:"key"`
	Alias  string `json:"alias"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	LinkID string `json:"link_id"`
}

type importResponse struct {
	DryRun   bool  `json:"dry_run"`
	Imported int   `json:"imported"`
	Skipped  int   `json:"skipped"`
	Exists   int   `json:"exists"`
	Failed   int   `json:"failed"`
	Clicks   int64 `json:"clicks"`
	// ClicksRedated counts, of Clicks, dated clicks whose date was in the
	// future or before 2000, counted undated instead (importer.Report).
	ClicksRedated int64 `json:"clicks_redated"`
	// Complete is false when the source stopped before its end (Error
	// says why): what was read before is imported, and running the import
	// again carries on.
	Complete       bool                 `json:"complete"`
	Error          string               `json:"error,omitempty"`
	Items          []importItemResponse `json:"items"`
	ItemsTruncated bool                 `json:"items_truncated"`
	MoreItems      int                  `json:"more_items"`
}

// handleImport imports links from another shortener into the caller's
// workspace: a file's content in data (and log_data), or a shortener's
// API at url, fetched by the server through the webhook guard (no
// private addresses unless webhooks.allow_private).
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in importRequest
	// The file's text in in.Data, which is the body's own buffer, is
	// held until the import ends, and the room its body took in the body
	// gate with it.
	held, err := s.decodeJSONHeld(w, r, &in, maxImportBody, heldImport)
	if err != nil {
		return err
	}
	defer held()
	if s.imports == nil {
		return link.Errorf(link.ENOTFOUND, "imports are not available on this server")
	}
	onConflict, err := importer.ParseOnConflict(in.OnConflict)
	if err != nil {
		return fieldError("on_conflict", "must be skip or rename")
	}
	cfg, err := s.importSourceConfig(r, &in)
	if err != nil {
		return err
	}
	src, err := importer.Open(in.From, cfg)
	if err != nil {
		return s.importInputError(err, &in)
	}
	if cfg.URL != "" {
		// An import from an API gives its slot of the costly-work gate
		// back while it waits for the API (see gatedSource), but holds
		// a page of up to 64 MB: no more of them run at once than the
		// gate has slots.
		select {
		case s.apiImports <- struct{}{}:
			defer func() { <-s.apiImports }()
		default:
			return s.costly.busy(w, costlyImport)
		}
	}
	release, err := s.admit(w, r, costlyImport)
	if err != nil {
		return err
	}
	if cfg.URL != "" {
		gated := &gatedSource{Source: src, a: s.costly, release: release}
		src, release = gated, func() { gated.release() }
	}
	defer release()
	var rep *importer.Report
	var runErr error
	if err := s.work(costlyImport, func() error {
		rep, runErr = importer.Run(r.Context(), s.imports, src, importer.Options{
			WorkspaceID: c.workspace.ID, DryRun: in.DryRun, OnConflict: onConflict,
			Rules: s.servedRules, Blocked: s.blocklist.blocks, MaxItems: maxImportItems, MaxLinks: maxImportLinks, Now: s.now,
		})
		return nil
	}); err != nil {
		return err
	}
	if runErr != nil && (importer.IsInputError(runErr) || r.Context().Err() != nil) {
		return s.importInputError(runErr, &in)
	}
	out := importResponse{DryRun: rep.DryRun, Imported: rep.Imported, Skipped: rep.Skipped, Exists: rep.Exists, Failed: rep.Failed,
		Clicks: rep.Clicks, ClicksRedated: rep.ClicksRedated, Complete: runErr == nil, Items: make([]importItemResponse, 0, len(rep.Items)),
		ItemsTruncated: rep.MoreItems > 0, MoreItems: rep.MoreItems}
	if runErr != nil {
		out.Error = scrubSecret(runErr.Error(), in.APIKey)
		s.logger.Warn("import stopped", "workspace", c.workspace.ID, "from", in.From, "error", out.Error)
	}
	for _, it := range rep.Items {
		out.Items = append(out.Items, importItemResponse{Where: it.Where, Key: it.Key, Alias: it.Alias,
			Status: string(it.Status), Reason: scrubSecret(it.Reason, in.APIKey), LinkID: it.LinkID})
	}
	if !in.DryRun && (rep.Imported > 0 || rep.Skipped > 0 || rep.Failed > 0) {
		if err := s.audit.RecordAudit(r.Context(), []string{c.workspace.ID}, link.AuditLinksImported,
			link.AuditTarget{Type: "workspace", ID: c.workspace.ID}, map[string]link.Change{
				"from":     {After: optional(in.From)},
				"imported": {After: optional(strconv.Itoa(rep.Imported))},
				"skipped":  {After: optional(strconv.Itoa(rep.Skipped))},
				"failed":   {After: optional(strconv.Itoa(rep.Failed))},
				"clicks":   {After: optional(strconv.FormatInt(rep.Clicks, 10))},
			}); err != nil {
			s.logger.Error("audit import", "error", err)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// importSourceConfig checks that the request names a file's data or an
// API's URL (not both, nor neither) and returns what the source is opened
// with.
func (s *Server) importSourceConfig(r *http.Request, in *importRequest) (importer.SourceConfig, error) {
	var cfg importer.SourceConfig
	switch {
	case in.From == "":
		return cfg, fieldError("from", "is required: one of "+strings.Join(importer.Names(), ", "))
	case !in.Data.Empty() && in.URL != "":
		return cfg, link.Errorf(link.EINVALIDREQUEST, "give data (a file's content) or url (a shortener's API), not both")
	case in.Data.Empty() && in.URL == "":
		return cfg, link.Errorf(link.EINVALIDREQUEST, "give data (a file's content) or url (a shortener's API)")
	case !in.LogData.Empty() && in.Data.Empty():
		return cfg, link.Errorf(link.EINVALIDREQUEST, "log_data goes with data (YOURLS's url table as CSV)")
	case !in.Data.Empty():
		cfg.File = in.Data.Reader()
		if !in.LogData.Empty() {
			cfg.LogFile = in.LogData.Reader()
		}
		return cfg, nil
	}
	if _, api := importer.Kind(in.From); !api {
		cfg.URL = in.URL // Open says what is wrong; nothing is fetched
		return cfg, nil
	}
	if err := s.webhookTargets.CheckWebhookTarget(r.Context(), in.URL); err != nil {
		return cfg, fieldError("url", scrubSecret(err.Error(), in.APIKey))
	}
	cfg.URL, cfg.APIKey, cfg.HTTPClient = in.URL, in.APIKey, s.importClient
	return cfg, nil
}

// importInputError is the problem answer of a source that refused its
// input, with its field errors, without the API key.
func (s *Server) importInputError(err error, in *importRequest) error {
	if code := link.ErrorCode(err); code != link.EINTERNAL {
		e := &link.Error{Code: code, Message: scrubSecret(link.ErrorMessage(err), in.APIKey)}
		for _, f := range link.ErrorFields(err) {
			e.Fields = append(e.Fields, link.FieldError{Field: f.Field, Message: scrubSecret(f.Message, in.APIKey)})
		}
		return e
	}
	return err
}

// scrubSecret removes secret from a message that may quote it (a URL
// with the key in its query, as YOURLS's API takes it).
func scrubSecret(msg, secret string) string {
	if secret == "" {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "…")
}

// gatedSource holds the slot of the costly-work gate only while the
// import works on what an API source handed over, not while it waits for
// that API (up to a minute an answer, as many pages as it claims): an
// import from a slow or hostile shortener never keeps the searches,
// exports and analytics of every workspace waiting. The slot is taken
// again, as long as the request lives, for each link and for the last
// batch's write.
type gatedSource struct {
	importer.Source
	a       *admission
	release func() // of the slot held, or a no-op
}

func (g *gatedSource) Each(ctx context.Context, fn func(importer.Link, *importer.RowError) error) error {
	g.leave()
	err := g.Source.Each(ctx, func(l importer.Link, rowErr *importer.RowError) error {
		if err := g.enter(ctx); err != nil {
			return err
		}
		defer g.leave()
		return fn(l, rowErr)
	})
	if enterErr := g.enter(ctx); err == nil {
		err = enterErr
	}
	return err
}

func (g *gatedSource) enter(ctx context.Context) error {
	select {
	case g.a.slots <- struct{}{}:
		g.release = g.a.held(costlyImport, true)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedSource) leave() {
	g.release()
	g.release = func() {}
}
