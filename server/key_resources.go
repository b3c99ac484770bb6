package server

import (
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// keyResourcePaths maps the routes an API key can reach to the resource
// each belongs to (link.APIKey.Resources): a path is the prefix or the
// prefix followed by "/…". A route a key can reach that is in none is
// refused to every limited key (TestKeyResourceRoutes keeps the table
// whole).
var keyResourcePaths = []struct{ prefix, resource string }{
	{"/v1/links", link.ResourceLinks},
	{"/v1/tags", link.ResourceLinks}, // the colours and descriptions of the links' tags
	{"/api/urls", link.ResourceLinks},
	{"/api/v2/links", link.ResourceLinks},
	{"/api/v2/users", link.ResourceLinks}, // Kutt's "who am I", with the key's links
	{"/yourls-api.php", link.ResourceLinks},
	{"/v1/analytics", link.ResourceAnalytics},
	{"/v1/events/stream", link.ResourceAnalytics},
	{"/v1/campaigns", link.ResourceCampaigns},
	{"/v1/domains", link.ResourceDomains},
	{"/api/v2/domains", link.ResourceDomains},
	{"/v1/webhooks", link.ResourceWebhooks},
	{"/v1/qr-codes", link.ResourceQRCodes},
	{"/v1/utm-templates", link.ResourceUTMTemplates},
	{"/v1/keys", link.ResourceKeys},
	{"/v1/members", link.ResourceMembers},
	{"/v1/invitations", link.ResourceMembers},
	{"/v1/audit-log", link.ResourceAudit},
	{"/v1/imports", link.ResourceImports},
}

// resourceOf returns the resource of path, or "" for none.
func resourceOf(path string) string {
	// Kutt's stats of a link, under its links, are analytics: the
	// browsers, systems, countries and referrers of its clicks, which a
	// key limited to links reads nowhere else.
	if rest, ok := strings.CutPrefix(path, "/api/v2/links/"); ok {
		if id, tail, ok := strings.Cut(rest, "/"); ok && id != "" && tail == "stats" {
			return link.ResourceAnalytics
		}
	}
	for _, p := range keyResourcePaths {
		if rest, ok := strings.CutPrefix(path, p.prefix); ok && (rest == "" || rest[0] == '/') {
			return p.resource
		}
	}
	return ""
}

// checkKeyResources answers 403 when c is an API key limited to
// resources that do not include the one of r's path.
func checkKeyResources(c *caller, r *http.Request) error {
	if c.key == nil || len(c.key.Resources) == 0 {
		return nil
	}
	res := resourceOf(r.URL.Path)
	if res != "" && c.key.Allows(res) {
		return nil
	}
	need := res
	if need == "" {
		need = "a resource of its own"
	}
	return link.Errorf(link.EFORBIDDEN, "this API key is limited to %s; %s %s needs %s",
		strings.Join(c.key.Resources, ", "), r.Method, r.URL.Path, need)
}
