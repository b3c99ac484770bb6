package server

// The interstitials of a link: the page that sends a visitor in a social
// app's in-app browser on to their system browser (escape_in_app_browser),
// and the page that fires the workspace's retargeting pixels before the
// redirect (retargeting). Both are opt-in per link; a link with neither
// never reaches this file (link.Link.HasControls in redirect). Either is
// served where the redirect would be, after the password, the expiry and
// limits, the rules and variants and the forwarding, and counts the click
// the redirect would have counted: the page then leads to the destination
// itself, not back here, so a visit counts once.

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// interstitialScript is the only script of the page, allowed by its hash:
// it starts the pixels named by the page's data attributes (no ID is
// written into script) and then leaves for data-next after data-delay
// milliseconds.
const interstitialScript = `(function(){var d=document.getElementById('lb').dataset;` +
	`function load(src){var s=document.createElement('script');s.async=true;s.src=src;document.head.appendChild(s)}` +
	`if(d.meta){var f=window.fbq=function(){f.callMethod?f.callMethod.apply(f,arguments):f.queue.push(arguments)};` +
	`window._fbq=f;f.push=f;f.loaded=true;f.version='2.0';f.queue=[];` +
	`load('https://connect.facebook.net/en_US/fbevents.js');f('init',d.meta);f('track','PageView')}` +
	`if(d.google){window.dataLayer=window.dataLayer||[];window.gtag=function(){window.dataLayer.push(arguments)};` +
	`window.gtag('js',new Date());window.gtag('config',d.google);` +
	`load('https://www.googletagmanager.com/gtag/js?id='+encodeURIComponent(d.google))}` +
	`if(d.linkedin){window._linkedin_partner_id=d.linkedin;window._linkedin_data_partner_ids=[d.linkedin];` +
	`load('https://snap.licdn.com/li.lms-analytics/insight.min.js')}` +
	`if(d.next)setTimeout(function(){location.replace(d.next)},+d.delay||0)})();`

const interstitialStyle = controlPageStyle + `a.button{display:inline-block;padding:.6rem 1rem;background:#1f4fd1;color:#fff;` +
	`border-radius:.4rem;text-decoration:none;margin:.5rem 0}small{color:#555}`

// pixelDelay is how long the page waits for the pixels before it leaves,
// in milliseconds; the meta refresh takes over after pixelRefresh seconds
// where script does not run.
const (
	pixelDelay   = "800"
	pixelRefresh = "2"
)

// The hosts each network's pixel loads its script from and sends to, the
// only ones the page's CSP names (for the networks the workspace uses).
var pixelHosts = map[string]struct{ script, img, connect, frame string }{
	"meta": {script: "https://connect.facebook.net", img: "https://www.facebook.com", connect: "https://www.facebook.com"},
	"google": {script: "https://www.googletagmanager.com",
		img:     "https://www.googletagmanager.com https://*.google-analytics.com https://googleads.g.doubleclick.net https://www.google.com",
		connect: "https://www.googletagmanager.com https://*.google-analytics.com https://*.analytics.google.com https://googleads.g.doubleclick.net https://www.google.com",
		frame:   "https://td.doubleclick.net"},
	"linkedin": {script: "https://snap.licdn.com", img: "https://px.ads.linkedin.com", connect: "https://px.ads.linkedin.com"},
}

// interstitialCSP is the page's policy: its own script and style by hash,
// and the hosts of the pixels p names, nothing else.
func interstitialCSP(p *link.Pixels) string {
	script, img, connect, frame := "'sha256-"+cspHash(interstitialScript)+"'", "", "", ""
	for _, n := range [...]struct{ name, id string }{{"meta", p.Meta}, {"google", p.Google}, {"linkedin", p.LinkedIn}} {
		if n.id == "" {
			continue
		}
		h := pixelHosts[n.name]
		script += " " + h.script
		img += " " + h.img
		connect += " " + h.connect
		if h.frame != "" {
			frame += " " + h.frame
		}
	}
	csp := "default-src 'none'; script-src " + script + "; style-src 'sha256-" + cspHash(interstitialStyle) + "'"
	if img != "" {
		csp += "; img-src" + img + "; connect-src" + connect
	} else {
		csp += "; img-src 'none'"
	}
	if frame != "" {
		csp += "; frame-src" + frame
	}
	return csp + "; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
}

var interstitialPage = template.Must(template.New("interstitial").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
{{if .Auto}}<meta http-equiv="refresh" content="{{.Refresh}};url={{.Next}}">
{{end}}<title>{{if .App}}Open in your browser{{else}}Redirecting…{{end}}</title>
<style>` + interstitialStyle + `</style></head>
<body><div id="lb"{{if .Auto}} data-next="{{.Next}}" data-delay="{{.Delay}}"{{end}}{{with .Pixels}}{{if .Meta}} data-meta="{{.Meta}}"{{end}}{{if .Google}} data-google="{{.Google}}"{{end}}{{if .LinkedIn}} data-linkedin="{{.LinkedIn}}"{{end}}{{end}}>
{{if .IOS}}<h1>Open this link in Safari</h1>
<p>You are in {{.App}}’s in-app browser. The page opens better in Safari, where you are signed in and your passwords are.</p>
<p><a class="button" id="open" href="{{.Safari}}">Open in Safari</a></p>
<p><small>If nothing happens, tap <b>···</b> or the share button and choose <b>Open in external browser</b> (or <b>Open in Safari</b>).</small></p>
<p><a id="continue" href="{{.Dest}}">Continue in {{.App}}</a></p>
{{else if .App}}<h1>Opening your browser…</h1>
<p>You are in {{.App}}’s in-app browser; this link opens in your own browser.</p>
<p><a class="button" id="open" href="{{.Next}}">Open in browser</a></p>
<p><a id="continue" href="{{.Dest}}">Continue in {{.App}}</a></p>
{{else}}<p>Redirecting… <a id="continue" href="{{.Dest}}">Continue</a></p>
{{end}}</div>
<script>` + interstitialScript + `</script></body></html>
`))

// interstitialData is what the page shows.
type interstitialData struct {
	App     string       // the in-app browser's app, "" when not escaping one
	IOS     bool         // escaping an iOS in-app browser: instructions, no automatic step
	Auto    bool         // the page leaves for Next by itself
	Next    template.URL // where it leaves for: the destination, or an Android intent
	Dest    template.URL // the destination, for the link to continue here
	Safari  template.URL // the destination as Safari opens it from another app
	Delay   string
	Refresh string
	Pixels  *link.Pixels // nil: none fired
}

// interstitial answers a GET, HEAD or the password form's POST of l going
// to loc, its variant (from 1; 0 for none), with the page of the link's
// interstitials that applies to the visitor, counting the click (not a
// HEAD's). It
// reports false, having written nothing, when none applies: the visitor
// is in no in-app browser it knows a way out of (or l does not escape
// them), and l fires no pixels for them (it does not retarget, the
// workspace has no pixels, or the visitor is a bot).
func (s *Server) interstitial(w http.ResponseWriter, r *http.Request, l *link.Link, loc string, variant uint8) bool {
	if !strings.HasPrefix(loc, "https://") && !strings.HasPrefix(loc, "http://") {
		return false // destinations are http(s); anything else goes as it did
	}
	ua := headerValue(r.Header, "User-Agent")
	var app, platform string
	if l.EscapeInApp {
		if app, platform = analytics.InAppBrowser(ua); platform == "" {
			app = ""
		}
	}
	var pixels *link.Pixels
	if l.Retargeting && !s.uas.Classify(ua).Bot {
		if ws, err := s.workspaces.FindWorkspaceByID(r.Context(), l.WorkspaceID); err == nil && ws.Pixels.Any() {
			pixels = &ws.Pixels
		}
	}
	if app == "" && pixels == nil {
		return false
	}
	d := interstitialData{App: app, Dest: template.URL(loc), Next: template.URL(loc), Auto: true, Pixels: pixels,
		Delay: "0", Refresh: "0"}
	switch platform {
	case analytics.PlatformIOS:
		d.IOS, d.Auto = true, false
		d.Safari = template.URL("x-safari-" + loc)
	case analytics.PlatformAndroid:
		d.Next = template.URL(intentURL(loc))
	}
	if pixels != nil {
		d.Delay, d.Refresh = pixelDelay, pixelRefresh
	}
	if r.Method != http.MethodHead {
		s.recordClick(r, l, s.now(), variant)
	}
	w.Header()["Cache-Control"] = cacheTemporary
	writePage(w, r, http.StatusOK, interstitialCSP(pixelsOrNone(pixels)), interstitialPage, d)
	return true
}

func pixelsOrNone(p *link.Pixels) *link.Pixels {
	if p == nil {
		return &link.Pixels{}
	}
	return p
}

// intentURL is an Android intent that opens the http(s) URL loc in the
// default browser rather than in the app the visitor is in, loc itself
// where no app takes it: intent://host/path?query#fragment#Intent;…;end.
// Android splits the intent at its last '#', so loc's fragment stays and
// the escaped fallback holds none.
func intentURL(loc string) string {
	scheme, rest, _ := strings.Cut(loc, "://")
	return "intent://" + rest + "#Intent;scheme=" + scheme +
		";action=android.intent.action.VIEW;category=android.intent.category.BROWSABLE;S.browser_fallback_url=" +
		intentEscape(loc) + ";end"
}

// intentEscape percent-encodes every byte of s but the unreserved ones,
// as an intent's string extra must be.
func intentEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
