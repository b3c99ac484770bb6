package server

import (
	"html/template"
	"net/http"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

var previewPage = template.Must(template.New("preview").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>Preview of /{{.Code}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:12vh auto;padding:0 1rem;color:#222}
.dest{word-break:break-all;background:#f4f4f4;padding:.5rem;border-radius:4px}
a.go{display:inline-block;margin-top:1rem;padding:.5rem 1rem;background:#1f5fbf;color:#fff;border-radius:4px;text-decoration:none}
.gone{color:#a00}
details{margin-top:2.5rem;color:#444}summary{cursor:pointer}label{display:block;margin-top:.6rem;font-weight:600}
select,textarea,input{font:inherit;width:100%;box-sizing:border-box;padding:.3rem}textarea{min-height:5rem}
button{margin-top:.8rem;font:inherit;padding:.4rem .9rem}</style></head>
<body><h1>{{if .Title}}{{.Title}}{{else}}Where /{{.Code}} goes{{end}}</h1>
{{if .Gone}}<p class="gone">{{.Gone}}</p>{{end}}
{{if .Protected}}<p id="protected">This short link is protected by a password: where it leads is shown only to those who know it.</p>
{{else}}<p>This short link leads to:</p>
<p class="dest" id="destination">{{.Destination}}</p>
<p>Host: <strong id="host">{{.Host}}</strong>{{if ne .Host .HostUnicode}} (shown as {{.HostUnicode}}; the address your browser visits is {{.Host}}){{end}}</p>
{{end}}{{if not .Gone}}<a class="go" id="continue" href="{{.Location}}" rel="noreferrer nofollow">Continue</a>{{end}}
<details id="report"><summary>Report this link</summary>
<form method="post" action="/{{.Code}}+">
<p>Tell the admin of this service that /{{.Code}} is abusive. Your address is not kept with the report.</p>
<label for="reason">Why</label>
<select id="reason" name="reason" required>{{range .Reasons}}<option value="{{.Value}}">{{.Label}}</option>{{end}}</select>
<label for="details">What you saw (optional)</label>
<textarea id="details" name="details" maxlength="1000"></textarea>
<label for="contact">Your e-mail address, if the admin may write to you (optional)</label>
<input id="contact" name="contact" type="email" maxlength="254">
<button type="submit">Send the report</button>
</form></details>
</body></html>
`))

type previewData struct {
	Code, Title, Destination, Host, HostUnicode, Location, Gone string
	Protected                                                   bool
	Reasons                                                     []reportReason
}

// reportReason is a choice of the report form.
type reportReason struct{ Value, Label string }

// reportReasons are the choices of the preview's report form, in
// link.AbuseReasons' order.
var reportReasons = []reportReason{
	{link.AbusePhishing, "Phishing: it asks for passwords or payment details"}, {link.AbuseMalware, "Malware or a harmful download"},
	{link.AbuseSpam, "Spam"}, {link.AbuseIllegal, "Illegal content"}, {link.AbuseOther, "Something else"},
}

// previewCSP is pageCSP with the report form's post back to this host.
const previewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// preview answers GET and HEAD /{code}+ on the primary host (host "") or a
// custom domain: a page that shows where the link goes (its host as
// A-labels, which is what a browser visits, beside its Unicode form), its
// title and a Continue link to the short link itself, so that following
// it is a click like any other. The preview is never a click. An unknown
// code is the 404 page; an expired, used-up or blocked link says so and
// has no Continue link. A protected link's preview shows nothing of where
// it goes (not its destination, host or title: the password form shows
// none of them either), only that it is protected, and its Continue link
// leads to the form. The unlock cookie is scoped to the link's own path,
// which /{code}+ is not, so no visitor is unlocked here.
func (s *Server) preview(w http.ResponseWriter, r *http.Request, host, code string) {
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		s.notFound(w, r, code+"+")
		return
	} else if err != nil {
		s.writeError(w, r, err)
		return
	}
	data := previewData{Code: code, Location: s.urls.ShortURL(l), Protected: l.PasswordHash != "", Reasons: reportReasons}
	if !data.Protected {
		data.Title, data.Destination = l.Title, Destination(l)
		data.Host, data.HostUnicode = wire.DestinationHosts(l.DestinationURL)
	}
	if gone := s.previewGone(r, l); gone != linkLive {
		data.Gone = goneMessage(l, gone).Text
	}
	writePage(w, r, http.StatusOK, previewCSP, previewPage, data)
}

// previewGone says whether l still goes to its destination, without
// taking a click; a failure to read its click count shows it as live.
func (s *Server) previewGone(r *http.Request, l *link.Link) linkGone {
	gone, _ := s.linkState(r.Context(), l, s.now(), false)
	return gone
}
