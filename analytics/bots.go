package analytics

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// botFamilies lists the tokens that mark a user agent as a bot, matched
// case-insensitively anywhere in it, with the family each names. Tokens
// with an empty family only say "bot". Where several tokens match, the
// leftmost named one wins, the longest at the same place.
//
// Tokens are chosen to miss real people: "pinterestbot", not "pinterest",
// which the Pinterest app's in-app browser sends; no bare "bot", which
// matches the phone brand Cubot.
var botFamilies = map[string][]string{
	// Search and AI crawlers.
	"Googlebot": {"googlebot", "adsbot-google", "mediapartners-google", "google-inspectiontool",
		"googleother", "storebot-google", "feedfetcher-google", "apis-google", "google-read-aloud",
		"google-pagerenderer", "google-site-verification", "googleprober", "googleproducer"},
	"bingbot":       {"bingbot", "bingpreview", "msnbot", "adidxbot"},
	"YandexBot":     {"yandexbot", "yandex.com/bots"},
	"Baiduspider":   {"baiduspider"},
	"DuckDuckBot":   {"duckduckbot", "duckassistbot"},
	"Yahoo Slurp":   {"yahoo! slurp"},
	"Applebot":      {"applebot"},
	"PetalBot":      {"petalbot"},
	"SeznamBot":     {"seznambot"},
	"Sogou":         {"sogou web spider"},
	"AhrefsBot":     {"ahrefsbot"},
	"SemrushBot":    {"semrushbot"},
	"MJ12bot":       {"mj12bot"},
	"DotBot":        {"dotbot"},
	"Bytespider":    {"bytespider"},
	"Amazonbot":     {"amazonbot"},
	"CCBot":         {"ccbot"},
	"GPTBot":        {"gptbot", "chatgpt-user", "oai-searchbot"},
	"ClaudeBot":     {"claudebot", "claude-user", "claude-web", "anthropic-ai"},
	"PerplexityBot": {"perplexitybot", "perplexity-user"},
	"Meta":          {"meta-externalagent", "meta-externalfetcher", "facebookbot", "facebookcatalog"},

	// Link unfurlers and previewers.
	"Slackbot":            {"slackbot", "slack-imgproxy"},
	"Twitterbot":          {"twitterbot"},
	"facebookexternalhit": {"facebookexternalhit", "facebot"},
	"Discordbot":          {"discordbot"},
	"WhatsApp":            {"whatsapp/"},
	"TelegramBot":         {"telegrambot"},
	"LinkedInBot":         {"linkedinbot"},
	"SkypeUriPreview":     {"skypeuripreview"},
	"Iframely":            {"iframely"},
	"Embedly":             {"embedly"},
	"redditbot":           {"redditbot"},
	"Mastodon":            {"mastodon/"},
	"Pinterest":           {"pinterestbot", "pinterest/0."},
	"Bluesky":             {"cardyb"},
	"Snapchat":            {"snap url preview"},
	"VK":                  {"vkshare"},

	// HTTP libraries and command-line tools.
	"curl":              {"curl/"},
	"Wget":              {"wget/"},
	"python-requests":   {"python-requests"},
	"python-urllib":     {"python-urllib"},
	"httpx":             {"python-httpx"},
	"aiohttp":           {"aiohttp"},
	"Go-http-client":    {"go-http-client"},
	"okhttp":            {"okhttp"},
	"axios":             {"axios/"},
	"node-fetch":        {"node-fetch"},
	"undici":            {"undici"},
	"Java":              {"java/"},
	"Apache-HttpClient": {"apache-httpclient"},
	"libwww-perl":       {"libwww-perl"},
	"PostmanRuntime":    {"postmanruntime"},
	"HTTPie":            {"httpie"},
	"Scrapy":            {"scrapy"},
	"Guzzle":            {"guzzlehttp"},
	"Dart":              {"dart:io"},
	"PowerShell":        {"windowspowershell", "powershell/"},
	"Insomnia":          {"insomnia/"},

	// Uptime monitors.
	"UptimeRobot":   {"uptimerobot"},
	"Pingdom":       {"pingdom"},
	"StatusCake":    {"statuscake"},
	"Site24x7":      {"site24x7"},
	"Better Uptime": {"better uptime", "betteruptime", "better stack"},
	"Datadog":       {"datadog"},
	"Checkly":       {"checkly"},
	"Uptime Kuma":   {"uptime-kuma", "uptime kuma"},
	"Prometheus":    {"blackbox exporter", "blackbox-exporter", "prometheus/"},
	"New Relic":     {"newrelicpinger"},
	"Freshping":     {"freshping"},
	"HetrixTools":   {"hetrixtools"},
	"Gatus":         {"gatus/"},

	// Headless and automated browsers.
	"HeadlessChrome": {"headlesschrome"},
	"PhantomJS":      {"phantomjs"},
	"Lighthouse":     {"chrome-lighthouse"},

	// Bots of no family we name.
	"": {"crawler", "spider", "scraper", "headless", "bot/"},
}

var botTokens = newTokenMatcher(botFamilies)

// tokenMatcher finds any of a set of ASCII tokens in a string,
// case-insensitively, in one pass: a bit set of the tokens' first two
// bytes rejects almost every position at once, and a table indexed by
// those two bytes gives the few tokens to compare at the others.
type tokenMatcher struct {
	pairs  [1 << 16 / 64]uint64 // bit set of byPair[p] != 0, small enough for L1
	byPair [1 << 16]uint8       // index into lists, 0 for none
	lists  [][]matchToken       // longest first; lists[0] is unused
}

type matchToken struct {
	lower  string // the token in lower case
	family string // "" for a token that names no family
}

func newTokenMatcher(families map[string][]string) *tokenMatcher {
	m := &tokenMatcher{lists: make([][]matchToken, 1)}
	seen := make(map[string]bool)
	for family, tokens := range families {
		for _, t := range tokens {
			t = strings.ToLower(t)
			if len(t) < 2 || seen[t] {
				panic(fmt.Sprintf("analytics: bot token %q is shorter than two bytes or listed twice", t))
			}
			seen[t] = true
			pair := uint16(t[0])<<8 | uint16(t[1])
			if m.byPair[pair] == 0 {
				if len(m.lists) > 255 {
					panic("analytics: too many bot token prefixes")
				}
				m.byPair[pair] = uint8(len(m.lists))
				m.pairs[pair/64] |= 1 << (pair % 64)
				m.lists = append(m.lists, nil)
			}
			i := m.byPair[pair]
			m.lists[i] = append(m.lists[i], matchToken{lower: t, family: family})
		}
	}
	for _, ts := range m.lists {
		slices.SortFunc(ts, func(a, b matchToken) int {
			if n := cmp.Compare(len(b.lower), len(a.lower)); n != 0 {
				return n
			}
			return strings.Compare(a.lower, b.lower)
		})
	}
	return m
}

// match reports whether s holds a token and the family of the leftmost
// token that names one ("" when only unnamed tokens match).
func (m *tokenMatcher) match(s string) (family string, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		pair := uint16(lowerTable[s[i]])<<8 | uint16(lowerTable[s[i+1]])
		if m.pairs[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		for _, t := range m.lists[m.byPair[pair]] {
			if hasPrefixFold(s[i+2:], t.lower[2:]) {
				if t.family != "" {
					return t.family, true
				}
				ok = true
			}
		}
	}
	return "", ok
}

// lowerTable maps each byte to its ASCII lower case.
var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// hasPrefixFold reports whether s starts with lower, ignoring the case of
// ASCII letters in s.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if lowerTable[s[i]] != lower[i] {
			return false
		}
	}
	return true
}
