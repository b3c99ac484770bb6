package analytics

import "strings"

// The platforms of an in-app browser that linkbolt knows a way out of.
const (
	PlatformAndroid = "Android"
	PlatformIOS     = "iOS"
)

// InAppBrowser reports whether ua is the in-app browser of Instagram,
// Facebook (and Messenger), TikTok or LinkedIn: the app's name, and the
// platform it runs on (PlatformAndroid, PlatformIOS, or "" for another,
// which has no known way out). app is "" for any other user agent, link
// previews (facebookexternalhit, LinkedInBot) included. The apps write
// their own names into the user agent of their web views:
//
//	Instagram: "… Instagram 361.0.0.35.82 (iPhone14,5; iOS 18_1_1; …)"
//	Facebook:  "… [FBAN/FBIOS;FBAV/488.0.0.53.106;…]", "… [FB_IAB/FB4A;FBAV/…;]"
//	TikTok:    "… musical_ly_2023707030 … BytedanceWebview/d8a21c6", "trill_…"
//	LinkedIn:  "… [LinkedInApp]/9.29.6117"
func InAppBrowser(ua string) (app, platform string) {
	if len(ua) > MaxUALength {
		ua = ua[:MaxUALength]
	}
	switch {
	case strings.Contains(ua, "Instagram "):
		app = "Instagram"
	case strings.Contains(ua, "FBAN/") || strings.Contains(ua, "FB_IAB/") || strings.Contains(ua, "FBAV/"):
		app = "Facebook"
	case strings.Contains(ua, "musical_ly") || strings.Contains(ua, "BytedanceWebview") ||
		strings.Contains(ua, " trill_") || strings.Contains(ua, "TikTok"):
		app = "TikTok"
	case strings.Contains(ua, "LinkedInApp"):
		app = "LinkedIn"
	default:
		return "", ""
	}
	switch {
	case strings.Contains(ua, "Android"):
		platform = PlatformAndroid
	case strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPad") || strings.Contains(ua, "iPod"):
		platform = PlatformIOS
	}
	return app, platform
}
