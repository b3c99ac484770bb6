package analytics

import (
	"strings"

	useragent "github.com/mileusna/useragent"
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
