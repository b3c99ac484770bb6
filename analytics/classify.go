package analytics

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"

	useragent "github.com/mileusna/useragent"
	"github.com/oschwald/maxminddb-golang/v2"

	"github.com/linkbolt/linkbolt/link"
)

// The device classes of a click.
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
	DeviceBot     = "bot"
	DeviceUnknown = "unknown"
)

// Unknown is the value of a dimension that could not be told: a browser or
// OS outside the known set, or a country not found.
const Unknown = "unknown"

// MaxUALength bounds how much of a user agent is classified, hashed and
// cached. Real user agents are a few hundred bytes; a client can send
// megabytes, which must cost neither time nor cache memory.
const MaxUALength = 512

// UAClass is what a user agent says about a client. Every field is
// non-empty and comes from a small fixed set (or the bot table), so a
// client cannot grow the analytics dimensions with made-up names.
type UAClass struct {
	Browser string // e.g. "Chrome", "Safari", "curl", "Googlebot"; Unknown
	OS      string // e.g. "Windows", "macOS", "iOS", "Android"; Unknown
	Device  string // DeviceDesktop, DeviceMobile, DeviceTablet, DeviceBot or DeviceUnknown
	Bot     bool
}

// ClassifyUA classifies a user agent with github.com/mileusna/useragent,
// whose names it maps onto a small stable set, and a table of bot tokens
// (crawlers, link previewers, HTTP libraries and command-line tools,
// uptime monitors, headless browsers) that the library does not all know.
// An empty user agent is a bot: every browser sends one. For a bot,
// Browser is the bot's family from the table ("Googlebot", "Slackbot",
// "curl") or Unknown, and Device is DeviceBot.
//
// iPads since iPadOS 13 send a macOS user agent by default, so they count
// as macOS desktops: nothing in the string tells them apart.
func ClassifyUA(ua string) UAClass {
	ua = strings.TrimSpace(truncateUA(ua))
	if ua == "" {
		return UAClass{Browser: Unknown, OS: Unknown, Device: DeviceBot, Bot: true}
	}
	p := parseUA(ua)
	c := UAClass{OS: osName(p), Device: deviceOf(p, ua)}
	if family, ok := botTokens.match(ua); ok || p.Bot {
		c.Bot, c.Device, c.Browser = true, DeviceBot, family
		if c.Browser == "" {
			c.Browser = Unknown
		}
		return c
	}
	c.Browser = browserName(p, ua)
	return c
}

// parseUA runs the library on a string any client chooses; should it ever
// panic, the user agent is merely unknown rather than the recorder dead.
func parseUA(ua string) (p useragent.UserAgent) {
	defer func() {
		if recover() != nil {
			p = useragent.UserAgent{}
		}
	}()
	return useragent.Parse(ua)
}

// truncateUA cuts a user agent to MaxUALength bytes.
func truncateUA(ua string) string {
	if len(ua) > MaxUALength {
		return ua[:MaxUALength]
	}
	return ua
}

// browserNames maps the library's browser names onto ours; a name not
// here is Unknown.
var browserNames = map[string]string{
	useragent.Chrome:           "Chrome",
	useragent.Firefox:          "Firefox",
	useragent.Safari:           "Safari",
	useragent.MobileSafari:     "Safari",
	useragent.Edge:             "Edge",
	useragent.Opera:            "Opera",
	useragent.OperaMini:        "Opera",
	useragent.OperaTouch:       "Opera",
	"OPX":                      "Opera",
	useragent.Vivaldi:          "Vivaldi",
	useragent.SamsungBrowser:   "Samsung Internet",
	useragent.InternetExplorer: "Internet Explorer",
	"Trident":                  "Internet Explorer",
	"YaBrowser":                "Yandex Browser",
	"UCBrowser":                "UC Browser",
	"DuckDuckGo":               "DuckDuckGo",
	"Ddg":                      "DuckDuckGo",
	"Silk":                     "Silk",
	"Huawei Browser":           "Huawei Browser",
	"Miui Browser":             "Mi Browser",
	"Android browser":          "Android Browser",
	useragent.FacebookApp:      "Facebook",
	useragent.InstagramApp:     "Instagram",
	useragent.TiktokApp:        "TikTok",
	"Pinterest":                "Pinterest",
	"Snapchat":                 "Snapchat",
}

func browserName(p useragent.UserAgent, ua string) string {
	name := browserNames[p.Name]
	switch name {
	case "":
		return Unknown
	case "Safari", "Chrome":
		// Browsers built on WebKit or Blink that the library folds in.
		switch {
		case strings.Contains(ua, "Silk/"):
			return "Silk"
		case strings.Contains(ua, "DuckDuckGo/"), strings.Contains(ua, " Ddg/"):
			return "DuckDuckGo"
		}
	}
	return name
}

func osName(p useragent.UserAgent) string {
	switch p.OS {
	case useragent.Windows:
		return "Windows"
	case useragent.MacOS:
		return "macOS"
	case useragent.IOS:
		if p.Device == "iPad" {
			return "iPadOS"
		}
		return "iOS"
	case useragent.Android:
		return "Android"
	case useragent.Linux:
		return "Linux"
	case useragent.ChromeOS:
		return "ChromeOS"
	case useragent.Harmony:
		return "HarmonyOS"
	}
	return Unknown
}

func deviceOf(p useragent.UserAgent, ua string) string {
	switch {
	case p.OS == useragent.Android:
		// Android browsers mark phones with "Mobile"; tablets leave it
		// out (Chrome, Samsung Internet, Silk) or say "Tablet" (Firefox).
		// The library counts every Android device as a phone.
		if p.Tablet || !strings.Contains(ua, "Mobile") {
			return DeviceTablet
		}
		return DeviceMobile
	case p.Tablet:
		return DeviceTablet
	case p.Mobile:
		return DeviceMobile
	case p.Desktop:
		return DeviceDesktop
	}
	return DeviceUnknown
}

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

// DefaultUACacheSize is the bound of a UACache made without one.
const DefaultUACacheSize = 10_000

// UACache memoizes ClassifyUA: a few user agents make most clicks. It
// holds at most its size of entries and, when full, forgets an arbitrary
// one for each new user agent. The zero value is ready to use with
// DefaultUACacheSize, and a UACache is safe for concurrent use.
type UACache struct {
	mu   sync.RWMutex
	m    map[string]UAClass
	size int
}

// NewUACache returns a cache of at most size entries; size <= 0 means
// DefaultUACacheSize.
func NewUACache(size int) *UACache {
	if size <= 0 {
		size = DefaultUACacheSize
	}
	return &UACache{size: size}
}

// Classify returns ClassifyUA(ua), from the cache when it can.
func (c *UACache) Classify(ua string) UAClass {
	ua = truncateUA(ua)
	c.mu.RLock()
	cl, ok := c.m[ua]
	c.mu.RUnlock()
	if ok {
		return cl
	}
	cl = ClassifyUA(ua)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		if c.size <= 0 {
			c.size = DefaultUACacheSize
		}
		c.m = make(map[string]UAClass)
	}
	if _, ok := c.m[ua]; !ok {
		for len(c.m) >= c.size {
			for k := range c.m {
				delete(c.m, k)
				break
			}
		}
		// A copy, so the cache pins no request's larger header buffer.
		c.m[strings.Clone(ua)] = cl
	}
	return cl
}

// Len returns the number of cached user agents.
func (c *UACache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// GeoIP finds the country of an address in a MaxMind-format database:
// GeoLite2 or GeoIP2 Country or City, or DB-IP's lite databases in the same
// format. A nil *GeoIP knows no country. Country is safe for concurrent
// use; Close must wait until no Country call is running.
type GeoIP struct {
	db *maxminddb.Reader
}

// OpenGeoIP opens the database at path, memory-mapped. It fails with a
// clear message when the file is missing or not a MaxMind DB file.
func OpenGeoIP(path string) (*GeoIP, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		var pathErr *fs.PathError
		var sysErr *os.SyscallError
		if errors.As(err, &pathErr) || errors.As(err, &sysErr) {
			return nil, fmt.Errorf("geoip database: %w", err)
		}
		// Anything else (an empty file, no metadata, a corrupt tree) means
		// the file is not a MaxMind DB.
		return nil, fmt.Errorf("geoip database %s is not a MaxMind DB (.mmdb) file: %w", path, err)
	}
	return &GeoIP{db: db}, nil
}

// Country returns the ISO 3166-1 alpha-2 code of the country of addr in
// upper case, or Unknown: for an address the database does not hold, a
// private, loopback, link-local or otherwise non-global address, an
// invalid one, or a nil *GeoIP. IPv4-mapped IPv6 addresses are looked up
// as IPv4. The country is where the network is; a network whose location
// the database does not know gives the country it is registered in.
func (g *GeoIP) Country(addr netip.Addr) string {
	if g == nil || g.db == nil {
		return Unknown
	}
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return Unknown
	}
	res := g.db.Lookup(addr)
	if !res.Found() {
		return Unknown
	}
	var code string
	if err := res.DecodePath(&code, "country", "iso_code"); err != nil || code == "" {
		code = ""
		if err := res.DecodePath(&code, "registered_country", "iso_code"); err != nil {
			return Unknown
		}
	}
	return countryCode(code)
}

// countryCode returns code in upper case if it is two ASCII letters, else
// Unknown.
func countryCode(code string) string {
	if len(code) != 2 {
		return Unknown
	}
	upper := true
	for i := 0; i < 2; i++ {
		c := code[i]
		switch {
		case 'A' <= c && c <= 'Z':
		case 'a' <= c && c <= 'z':
			upper = false
		default:
			return Unknown
		}
	}
	if !upper {
		return strings.ToUpper(code)
	}
	return code
}

// Close unmaps the database. A nil *GeoIP closes without error.
func (g *GeoIP) Close() error {
	if g == nil || g.db == nil {
		return nil
	}
	return g.db.Close()
}

// VisitorHash returns the first 8 bytes, big-endian, of
// HMAC-SHA256(salt, addr || 0 || ua), where addr is the 16-byte form of the
// address (IPv4 as IPv4-mapped, so both spellings of one client agree; all
// zeros for an invalid address) and ua is cut to MaxUALength.
//
// The salt is a random secret of one UTC day (link.ClickService.DailySalt),
// deleted when its day is pruned. While it exists, whoever holds it can
// test whether a given address and user agent made a click; once it is
// deleted, the hash cannot be linked back to an address, not even by
// trying all 2^32 IPv4 addresses, since the key is gone. Only the hash is
// stored. 64 bits keep collisions among a day's visitors negligible.
func VisitorHash(salt []byte, addr netip.Addr, ua string) uint64 {
	// HMAC-SHA256 written out over arrays on the stack: crypto/hmac
	// allocates its two hash states on every call, which costs more than
	// the hashing. TestVisitorHashIsHMAC checks it against crypto/hmac.
	const block = 64 // SHA-256's block size
	var key [block]byte
	if len(salt) > block {
		sum := sha256.Sum256(salt)
		copy(key[:], sum[:])
	} else {
		copy(key[:], salt)
	}
	ua = truncateUA(ua)

	var inner [block + 17 + MaxUALength]byte
	for i, k := range key {
		inner[i] = k ^ 0x36
	}
	a := addr.As16()
	copy(inner[block:], a[:])
	inner[block+16] = 0
	n := block + 17 + copy(inner[block+17:], ua)
	innerSum := sha256.Sum256(inner[:n])

	var outer [block + sha256.Size]byte
	for i, k := range key {
		outer[i] = k ^ 0x5c
	}
	copy(outer[block:], innerSum[:])
	sum := sha256.Sum256(outer[:])
	return binary.BigEndian.Uint64(sum[:8])
}

// Classifier fills in what a click's user agent and address say and then
// forgets both. It is safe for concurrent use.
type Classifier struct {
	geo *GeoIP
	uas *UACache
}

// NewClassifier returns a classifier looking countries up in geo, which
// may be nil: every country is then Unknown.
func NewClassifier(geo *GeoIP) *Classifier {
	return &Classifier{geo: geo, uas: NewUACache(DefaultUACacheSize)}
}

// Classify fills clk's Browser, OS, Device, Bot, Country and Visitor from
// its UserAgent and Addr under the day's salt, then clears UserAgent and
// Addr so that neither outlives classification. An invalid Addr gives the
// country Unknown; the visitor hash is still computed over the user agent.
func (c *Classifier) Classify(clk *link.Click, salt []byte) {
	ua, addr := clk.UserAgent, clk.Addr
	cl := c.uas.Classify(ua)
	clk.Browser, clk.OS, clk.Device, clk.Bot = cl.Browser, cl.OS, cl.Device, cl.Bot
	clk.Country = c.geo.Country(addr)
	clk.Visitor = VisitorHash(salt, addr, ua)
	clk.UserAgent, clk.Addr = "", netip.Addr{}
}
