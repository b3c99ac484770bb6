package analytics

import (
	"net/netip"
	"strings"
	"testing"
)

// uaCases are real user agents and what they must classify as.
var uaCases = []struct {
	name, ua            string
	browser, os, device string
	bot                 bool
}{
	// Desktop browsers.
	{"Chrome Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome", "Windows", "desktop", false},
	{"Firefox Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox", "Windows", "desktop", false},
	{"Edge Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge", "Windows", "desktop", false},
	{"Opera Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0", "Opera", "Windows", "desktop", false},
	{"Vivaldi Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Vivaldi/7.0", "Vivaldi", "Windows", "desktop", false},
	{"Yandex Windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 YaBrowser/24.12.0.0 Safari/537.36", "Yandex Browser", "Windows", "desktop", false},
	{"IE 11", "Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko", "Internet Explorer", "Windows", "desktop", false},
	{"Safari macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Safari/605.1.15", "Safari", "macOS", "desktop", false},
	{"Chrome macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome", "macOS", "desktop", false},
	{"Firefox macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.7; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox", "macOS", "desktop", false},
	{"Edge macOS", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", "Edge", "macOS", "desktop", false},
	{"Chrome Linux", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome", "Linux", "desktop", false},
	{"Firefox Ubuntu", "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox", "Linux", "desktop", false},
	{"Chrome ChromeOS", "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome", "ChromeOS", "desktop", false},
	{"Slack desktop app", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.41.105 Chrome/130.0.6723.191 Electron/33.2.0 Safari/537.36 Sonic Slack_SSB/4.41.105", "unknown", "macOS", "desktop", false},

	// Phones and tablets.
	{"Safari iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1", "Safari", "iOS", "mobile", false},
	{"Chrome iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.103 Mobile/15E148 Safari/604.1", "Chrome", "iOS", "mobile", false},
	{"DuckDuckGo iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 DuckDuckGo/7 Safari/605.1.15", "DuckDuckGo", "iOS", "mobile", false},
	{"Instagram iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 361.0.0.35.82 (iPhone14,5; iOS 18_1_1; en_US; en; scale=3.00; 1170x2532; 674117118)", "Instagram", "iOS", "mobile", false},
	{"Facebook iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/488.0.0.53.106;FBBV/123;FBDV/iPhone14,2;FBMD/iPhone;FBSN/iOS;FBSV/17.6;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]", "Facebook", "iOS", "mobile", false},
	{"Pinterest app iPhone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [Pinterest/iOS]", "Pinterest", "iOS", "mobile", false},
	{"Safari iPad", "Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.7 Mobile/15E148 Safari/604.1", "Safari", "iPadOS", "tablet", false},
	{"Chrome Android phone", "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", "Chrome", "Android", "mobile", false},
	{"Chrome Android tablet", "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome", "Android", "tablet", false},
	{"Firefox Android phone", "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0", "Firefox", "Android", "mobile", false},
	{"Firefox Android tablet", "Mozilla/5.0 (Android 14; Tablet; rv:133.0) Gecko/133.0 Firefox/133.0", "Firefox", "Android", "tablet", false},
	{"Samsung Internet phone", "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36", "Samsung Internet", "Android", "mobile", false},
	{"Samsung Internet tablet", "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-X906B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Safari/537.36", "Samsung Internet", "Android", "tablet", false},
	{"Silk Kindle Fire", "Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/131.2.1 like Chrome/131.0.6778.39 Safari/537.36", "Silk", "Android", "tablet", false},
	{"Edge Android", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.104 Mobile Safari/537.36 EdgA/131.0.2903.87", "Edge", "Android", "mobile", false},
	{"Android WebView", "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.81 Mobile Safari/537.36", "Chrome", "Android", "mobile", false},
	{"TikTok Android", "Mozilla/5.0 (Linux; Android 14; 2201116SG Build/UKQ1.231003.002; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 musical_ly_2023707030 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/musical_ly app_version/37.7.3 ByteLocale/en ByteFullLocale/en Region/US AppId/1233 Spark/1.6.0.5-bugfix AppVersion/37.7.3 BytedanceWebview/d8a21c6", "TikTok", "Android", "mobile", false},
	{"Cubot phone is no bot", "Mozilla/5.0 (Linux; Android 9; CUBOT P30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", "Chrome", "Android", "mobile", false},

	// Crawlers.
	{"Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", "unknown", "bot", true},
	{"Googlebot smartphone", "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot", "Android", "bot", true},
	{"bingbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", "bingbot", "unknown", "bot", true},
	{"Applebot", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot", "unknown", "bot", true},
	{"YandexBot", "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot", "unknown", "bot", true},
	{"GPTBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "GPTBot", "unknown", "bot", true},
	{"unnamed crawler", "ExampleCrawler/1.0", "unknown", "unknown", "bot", true},

	// Link unfurlers.
	{"Slackbot", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slackbot", "unknown", "bot", true},
	{"Slack-ImgProxy", "Slack-ImgProxy (+https://api.slack.com/robots)", "Slackbot", "unknown", "bot", true},
	{"Twitterbot", "Twitterbot/1.0", "Twitterbot", "unknown", "bot", true},
	{"facebookexternalhit", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit", "unknown", "bot", true},
	{"iMessage preview", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0", "facebookexternalhit", "macOS", "bot", true},
	{"Discordbot", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "Discordbot", "unknown", "bot", true},
	{"WhatsApp", "WhatsApp/2.23.20.0 A", "WhatsApp", "unknown", "bot", true},
	{"TelegramBot", "TelegramBot (like TwitterBot)", "TelegramBot", "unknown", "bot", true},
	{"LinkedInBot", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "LinkedInBot", "unknown", "bot", true},
	{"SkypeUriPreview", "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com", "SkypeUriPreview", "Windows", "bot", true},
	{"Mastodon", "http.rb/5.1.1 (Mastodon/4.2.1; +https://mastodon.social/)", "Mastodon", "unknown", "bot", true},
	{"Pinterestbot", "Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)", "Pinterest", "unknown", "bot", true},
	{"redditbot", "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)", "redditbot", "unknown", "bot", true},
	{"Iframely", "Iframely/1.3.1 (+https://iframely.com/docs/about)", "Iframely", "unknown", "bot", true},

	// HTTP libraries and tools.
	{"curl", "curl/8.5.0", "curl", "unknown", "bot", true},
	{"Wget", "Wget/1.21.4", "Wget", "unknown", "bot", true},
	{"python-requests", "python-requests/2.32.3", "python-requests", "unknown", "bot", true},
	{"python-urllib", "Python-urllib/3.12", "python-urllib", "unknown", "bot", true},
	{"httpx", "python-httpx/0.28.1", "httpx", "unknown", "bot", true},
	{"aiohttp", "Python/3.12 aiohttp/3.11.10", "aiohttp", "unknown", "bot", true},
	{"Go-http-client", "Go-http-client/1.1", "Go-http-client", "unknown", "bot", true},
	{"okhttp", "okhttp/4.12.0", "okhttp", "unknown", "bot", true},
	{"axios", "axios/1.7.9", "axios", "unknown", "bot", true},
	{"node-fetch", "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", "node-fetch", "unknown", "bot", true},
	{"undici", "undici", "undici", "unknown", "bot", true},
	{"Java", "Java/17.0.9", "Java", "unknown", "bot", true},
	{"Apache-HttpClient", "Apache-HttpClient/4.5.14 (Java/17.0.9)", "Apache-HttpClient", "unknown", "bot", true},
	{"libwww-perl", "libwww-perl/6.72", "libwww-perl", "unknown", "bot", true},
	{"Postman", "PostmanRuntime/7.43.0", "PostmanRuntime", "unknown", "bot", true},
	{"HTTPie", "HTTPie/3.2.4", "HTTPie", "unknown", "bot", true},

	// Monitors.
	{"UptimeRobot", "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", "UptimeRobot", "unknown", "bot", true},
	{"Pingdom", "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)", "Pingdom", "unknown", "bot", true},
	{"StatusCake", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/103.0.0.0 Safari/537.36 StatusCake", "StatusCake", "Windows", "bot", true},
	{"Site24x7", "Mozilla/5.0 (compatible; Site24x7)", "Site24x7", "unknown", "bot", true},
	{"Better Uptime", "Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/91.0.4472.114 Safari/537.36", "Better Uptime", "Windows", "bot", true},
	{"Datadog", "Datadog/Synthetics", "Datadog", "unknown", "bot", true},
	{"Checkly", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Checkly/1.0 (https://www.checklyhq.com)", "Checkly", "Linux", "bot", true},
	{"Uptime Kuma", "Uptime-Kuma/1.23.16", "Uptime Kuma", "unknown", "bot", true},
	{"blackbox exporter", "Blackbox Exporter/0.25.0", "Prometheus", "unknown", "bot", true},

	// Headless browsers and no user agent at all.
	{"HeadlessChrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36", "HeadlessChrome", "Linux", "bot", true},
	{"PhantomJS", "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1", "PhantomJS", "Linux", "bot", true},
	{"empty", "", "unknown", "unknown", "bot", true},
	{"blank", "   ", "unknown", "unknown", "bot", true},
	{"garbage", "%%%", "unknown", "unknown", "unknown", false},
}

func TestClassifyUA(t *testing.T) {
	for _, tt := range uaCases {
		t.Run(tt.name, func(t *testing.T) {
			got := ClassifyUA(tt.ua)
			want := UAClass{Browser: tt.browser, OS: tt.os, Device: tt.device, Bot: tt.bot}
			if got != want {
				t.Fatalf("ClassifyUA(%q)\n got %+v\nwant %+v", tt.ua, got, want)
			}
		})
	}
}

// TestClassifyUALong checks that a huge user agent costs no more than its
// first MaxUALength bytes.
func TestClassifyUALong(t *testing.T) {
	base := uaCases[0].ua
	long := base + strings.Repeat(" x", 1<<20)
	if got, want := ClassifyUA(long), ClassifyUA(base); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got, want := VisitorHash([]byte("s"), netip.Addr{}, long), VisitorHash([]byte("s"), netip.Addr{}, long[:MaxUALength]); got != want {
		t.Fatalf("hash of long user agent %x, of its cut %x", got, want)
	}
}

// checkClass fails unless every field of c comes from the fixed sets.
func checkClass(t *testing.T, ua string, c UAClass) {
	t.Helper()
	browsers := map[string]bool{Unknown: true}
	for _, b := range browserNames {
		browsers[b] = true
	}
	for family := range botFamilies {
		if family != "" {
			browsers[family] = true
		}
	}
	oses := map[string]bool{"Windows": true, "macOS": true, "iOS": true, "iPadOS": true, "Android": true,
		"Linux": true, "ChromeOS": true, "HarmonyOS": true, Unknown: true}
	devices := map[string]bool{DeviceDesktop: true, DeviceMobile: true, DeviceTablet: true, DeviceBot: true, DeviceUnknown: true}
	if !browsers[c.Browser] || !oses[c.OS] || !devices[c.Device] || c.Bot != (c.Device == DeviceBot) {
		t.Fatalf("ClassifyUA(%q) = %+v: a field outside its set", ua, c)
	}
}

func FuzzClassifyUA(f *testing.F) {
	for _, tt := range uaCases {
		f.Add(tt.ua)
	}
	f.Add("Mozilla/5.0 (Linux; Android")
	f.Add("Mozilla/5.0 (iPhone; CPU iPhone OS")
	f.Add("(;;;)[[]]://http://")
	f.Fuzz(func(t *testing.T, ua string) {
		checkClass(t, ua, ClassifyUA(ua))
	})
}

func TestClassifyUANamesAreBounded(t *testing.T) {
	for _, tt := range uaCases {
		checkClass(t, tt.ua, ClassifyUA(tt.ua))
	}
	// A made-up browser name must not become a dimension value.
	for _, ua := range []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Evil-1234/1.0 Safari/537.36",
		"SomethingNew/1.0",
		"Mozilla/5.0 (compatible; RandomBot-93847/1.0; +https://example.com/bot)",
	} {
		c := ClassifyUA(ua)
		checkClass(t, ua, c)
		if c.Browser != Unknown {
			t.Errorf("ClassifyUA(%q).Browser = %q, want %q", ua, c.Browser, Unknown)
		}
	}
}

func BenchmarkClassifyUA(b *testing.B) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ClassifyUA(uaCases[i%len(uaCases)].ua)
		i++
	}
}
