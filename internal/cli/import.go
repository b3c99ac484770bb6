package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/linkbolt/linkbolt/importer"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/wire"
)

var importCommand = &command{
	name: "import",
	synopsis: "import --from yourls|shlink|kutt|bitly|csv --workspace ID [--file FILE] [--log FILE]\n" +
		"       [--url URL --api-key KEY] [--dry-run] [--on-conflict skip|rename] [--config FILE] [--token TOKEN]",
	summary: "move links and their clicks in from another shortener",
	about: `Import the links of another shortener into workspace ID, with their titles,
tags, creation times, click totals and, where the source keeps them, their
dated clicks. --from csv (url, alias, tags, title, created_at, clicks),
bitly (Bitly's CSV export) and yourls (its yourls_url table as CSV, with
--log its yourls_log table as CSV) read --file; shlink, kutt and yourls
with --url and --api-key (or LINKBOLT_IMPORT_API_KEY) read the shortener's
API. A link keeps its alias
when free; a taken alias is skipped, or renamed alias-2, alias-3, … with
--on-conflict rename. --dry-run checks everything and writes nothing.
Running it again adds nothing: a source's links are remembered, so after a
source that stopped half-way it carries on where it stopped. Prints a
summary and each skipped or failed row.

It works on the data file directly; while a running server holds the
file, it sends the import to that server (POST /v1/imports at
server.base_url), signed in with --token (a login token or a read_write
API key of the workspace), LINKBOLT_TOKEN, or admin.email and
admin.password; the server then fetches API sources itself.

On PostgreSQL (storage.postgres_url) it works on the database directly,
with or without servers running on it, and no --token is needed.`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		var o importOptions
		fs.StringVar(&o.from, "from", "", "the `SOURCE`: "+strings.Join(importer.Names(), ", ")+" (required)")
		fs.StringVar(&o.workspace, "workspace", "", "the workspace `ID` to import into (required)")
		fs.StringVar(&o.file, "file", "", "the exported `FILE` (CSV) to read")
		fs.StringVar(&o.log, "log", "", "YOURLS's yourls_log table as CSV `FILE`, for dated clicks")
		fs.StringVar(&o.url, "url", "", "the source's API base `URL`")
		fs.StringVar(&o.apiKey, "api-key", os.Getenv("LINKBOLT_IMPORT_API_KEY"), "the source's API `KEY`; default: $LINKBOLT_IMPORT_API_KEY, which,\nunlike the command line, other users of the machine cannot see")
		fs.BoolVar(&o.dryRun, "dry-run", false, "check everything, write nothing")
		fs.StringVar(&o.onConflict, "on-conflict", "skip", "`WHAT` to do with a link whose alias another link has: skip (the default) or rename")
		token := tokenFlag(fs)
		fs.Lookup("token").Usage = "a login `TOKEN` (from POST /v1/auth/login) or a read_write API key of the\nworkspace, used only when a running server holds the data file; default:\n$LINKBOLT_TOKEN, else a login with admin.email and admin.password"
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			o.token = *token
			return runImport(ctx, *configPath, o, stdout, stderr)
		}
	},
}

type importOptions struct {
	from, workspace, file, log, url, apiKey, onConflict, token string
	dryRun                                                     bool
}

// maxImportFile is the largest file the import sends to a running server
// (the route's body limit, with room for JSON's escapes).
const maxImportFile = 24 << 20

func runImport(ctx context.Context, configPath string, o importOptions, stdout, stderr io.Writer) error {
	switch {
	case o.from == "":
		return usageError{"--from SOURCE is required: one of " + strings.Join(importer.Names(), ", ")}
	case o.workspace == "":
		return usageError{"--workspace ID is required"}
	case o.file != "" && o.url != "":
		return usageError{"give --file or --url, not both"}
	case o.file == "" && o.url == "":
		return usageError{"give --file FILE (an exported file) or --url URL (the source's API)"}
	case o.log != "" && o.file == "":
		return usageError{"--log goes with --file (YOURLS's url table as CSV)"}
	}
	switch file, api := importer.Kind(o.from); {
	case !file && !api:
		return usageError{fmt.Sprintf("--from %q: want one of %s", o.from, strings.Join(importer.Names(), ", "))}
	case o.file != "" && !file:
		return usageError{fmt.Sprintf("--from %s reads the source's API: give --url URL and --api-key KEY instead of --file", o.from)}
	case o.url != "" && !api:
		return usageError{fmt.Sprintf("--from %s reads an exported file: give --file FILE instead of --url", o.from)}
	}
	onConflict, err := importer.ParseOnConflict(o.onConflict)
	if err != nil {
		return usageError{"--on-conflict must be skip or rename"}
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	if !cfg.Postgres() {
		if err := statDataFile(cfg); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	store, err := openStore(ctx, cfg, cfg.Storage.Path, stderr)
	if errors.Is(err, storage.ErrLocked) {
		fmt.Fprintln(stderr, "the data file is in use; sending the import to the running server at", cfg.Server.BaseURL)
		rep, err := importOverHTTP(ctx, cfg, o)
		if rep != nil {
			printImportReport(stdout, rep)
		}
		return err
	}
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer store.Data.Close()

	srcCfg := importer.SourceConfig{URL: o.url, APIKey: o.apiKey}
	if o.file != "" {
		f, err := os.Open(o.file)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		srcCfg.File = f
		if o.log != "" {
			lf, err := os.Open(o.log)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			defer lf.Close()
			srcCfg.LogFile = lf
		}
	}
	src, err := importer.Open(o.from, srcCfg)
	if err != nil {
		return fmt.Errorf("import: %s", link.ErrorMessage(err))
	}
	// The server's own short URLs are no destinations, as link creation
	// checks (the blocklist is the running server's: offline, it is not
	// checked).
	rules := &link.URLRules{ToASCII: wire.DestinationIDNA.ToASCII}
	for _, u := range []*url.URL{cfg.Server.BaseURL, cfg.Server.AltBaseURL} {
		if u != nil {
			host := u.Hostname()
			if strings.HasPrefix(u.Host, "[") {
				host = "[" + host + "]"
			}
			rules.AddBaseURL(u.Scheme, host, u.Port())
		}
	}
	// The rows are printed as they are decided: a file of millions of
	// rows is not held to be reported at its end.
	if o.dryRun {
		printDryRun(stdout)
	}
	rep, err := importer.Run(ctx, store.Imports, src, importer.Options{
		WorkspaceID: o.workspace, DryRun: o.dryRun, OnConflict: onConflict, Rules: rules,
		OnItem: func(it importer.Item) { printImportItem(stdout, importReportItemOf(it)) },
	})
	if importer.IsInputError(err) {
		return fmt.Errorf("import: %s", link.ErrorMessage(err))
	}
	printImportSummary(stdout, importReportJSON(rep))
	if err != nil {
		return fmt.Errorf("import: the source stopped (run the import again to carry on): %w", err)
	}
	return nil
}

// importReport is an import's report as POST /v1/imports answers it.
type importReport struct {
	DryRun   bool  `json:"dry_run"`
	Imported int   `json:"imported"`
	Skipped  int   `json:"skipped"`
	Exists   int   `json:"exists"`
	Failed   int   `json:"failed"`
	Clicks   int64 `json:"clicks"`
	// ClicksRedated: see importer.Report.
	ClicksRedated int64              `json:"clicks_redated"`
	Complete      bool               `json:"complete"`
	Error         string             `json:"error"`
	Items         []importReportItem `json:"items"`
	MoreItems     int                `json:"more_items"`
}

type importReportItem struct {
	Where  string `json:"where"`
	Key    string `json:"key"`
	Alias  string `json:"alias"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	LinkID string `json:"link_id"`
}

func importReportJSON(r *importer.Report) *importReport {
	out := &importReport{DryRun: r.DryRun, Imported: r.Imported, Skipped: r.Skipped, Exists: r.Exists, Failed: r.Failed, Clicks: r.Clicks,
		ClicksRedated: r.ClicksRedated, MoreItems: r.MoreItems}
	for _, it := range r.Items {
		out.Items = append(out.Items, importReportItemOf(it))
	}
	return out
}

func importReportItemOf(it importer.Item) importReportItem {
	return importReportItem{it.Where, it.Key, it.Alias, string(it.Status), it.Reason, it.LinkID}
}

// printImportReport prints the summary, then each row that was not
// simply imported: skipped, failed, renamed; those imported before only
// as a count.
func printImportReport(w io.Writer, r *importReport) {
	if r.DryRun {
		printDryRun(w)
	}
	printImportSummary(w, r)
	for _, it := range r.Items {
		printImportItem(w, it)
	}
	if r.MoreItems > 0 {
		fmt.Fprintf(w, "  … and %d more rows not listed\n", r.MoreItems)
	}
}

func printDryRun(w io.Writer) {
	fmt.Fprintln(w, "dry run: nothing was written; this is what the import would do")
}

func printImportSummary(w io.Writer, r *importReport) {
	fmt.Fprintf(w, "imported %d, skipped %d (imported before: %d), failed %d; %d clicks\n",
		r.Imported, r.Skipped, r.Exists, r.Failed, r.Clicks)
	if r.ClicksRedated > 0 {
		fmt.Fprintf(w, "%d of those clicks were dated in the future or before 2000: they count on their link's creation day\n", r.ClicksRedated)
	}
}

// printImportItem prints a row that was not simply imported: skipped,
// failed, renamed; those imported before are only counted.
func printImportItem(w io.Writer, it importReportItem) {
	if it.Status == string(link.ImportExists) || (it.Status == string(link.ImportImported) && it.Reason == "") {
		return
	}
	name := it.Alias
	if name == "" {
		name = it.Key
	}
	fmt.Fprintf(w, "  %-8s %s", it.Status, it.Where)
	if name != "" && !strings.Contains(it.Where, "(") { // a source's where may name it already
		fmt.Fprintf(w, " (%s)", name)
	}
	fmt.Fprintf(w, ": %s\n", it.Reason)
}

// importOverHTTP sends the import to the running server.
func importOverHTTP(ctx context.Context, cfg *config.Config, o importOptions) (*importReport, error) {
	body := map[string]any{"from": o.from, "dry_run": o.dryRun, "on_conflict": o.onConflict}
	if o.file != "" {
		data, err := readImportFile(o.file)
		if err != nil {
			return nil, err
		}
		body["data"] = data
		if o.log != "" {
			if body["log_data"], err = readImportFile(o.log); err != nil {
				return nil, err
			}
		}
	} else {
		body["url"], body["api_key"] = o.url, o.apiKey
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	base := cfg.Server.BaseURL.String()
	token, err := serverToken(ctx, cfg, o.token, "a login token from POST /v1/auth/login or a read_write API key of the workspace")
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/imports", bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Workspace-Id", o.workspace)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("import: the server answered %s: %s", resp.Status, problemDetail(resp.Body))
	}
	var rep importReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return nil, fmt.Errorf("import: the server's answer: %w", err)
	}
	if !rep.Complete {
		return &rep, fmt.Errorf("import: the source stopped (run the import again to carry on): %s", rep.Error)
	}
	return &rep, nil
}

func readImportFile(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("import: %w", err)
	}
	if info.Size() > maxImportFile {
		return "", fmt.Errorf("import: %s is %d bytes; a running server takes files of at most %d: stop the server and import offline, or split the file", path, info.Size(), maxImportFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("import: %w", err)
	}
	return string(b), nil
}
