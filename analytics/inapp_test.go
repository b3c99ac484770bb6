package analytics

import "testing"

func TestInAppBrowser(t *testing.T) {
	for _, c := range []struct{ ua, app, platform string }{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 361.0.0.35.82 (iPhone14,5; iOS 18_1_1; en_US; en; scale=3.00; 1170x2532; 674117118)", "Instagram", PlatformIOS},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 658543098)", "Instagram", PlatformAndroid},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/488.0.0.53.106;FBBV/123;FBDV/iPhone14,2;FBMD/iPhone;FBSN/iOS;FBSV/17.6;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]", "Facebook", PlatformIOS},
		{"Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/130.0.6723.107 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/489.0.0.66.81;]", "Facebook", PlatformAndroid},
		{"Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/460.0.0.44.109;FBBV/591425327;FBDV/iPad8,9;FBMD/iPad;FBSN/iPadOS;FBSV/17.4;FBSS/2;FBID/tablet;FBLC/en_US;FBOP/5]", "Facebook", PlatformIOS},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 musical_ly_34.4.0 JsSdk/2.0 NetType/WIFI Channel/App Store ByteLocale/en Region/US ByteFullLocale/en isDarkMode/0 WKWebView/1 RevealType/Dialog BytedanceWebview/d8a21c6", "TikTok", PlatformIOS},
		{"Mozilla/5.0 (Linux; Android 12; SM-G991B Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/108.0.5359.128 Mobile Safari/537.36 trill_2023107030 JsSdk/1.0 NetType/WIFI Channel/googleplay AppName/trill app_version/31.7.3 ByteLocale/en ByteFullLocale/en Region/GB Spark/1.4.3-alpha.7 AppVersion/31.7.3 BytedanceWebview/d8a21c6", "TikTok", PlatformAndroid},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.6117", "LinkedIn", PlatformIOS},
		{"Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230901.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/118.0.0.0 Mobile Safari/537.36 [LinkedInApp]/4.1.881", "LinkedIn", PlatformAndroid},
		// Browsers, web views of other apps, link previews: none.
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 Mobile/15E148 Safari/604.1", "", ""},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.81 Mobile Safari/537.36", "", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [Pinterest/iOS]", "", ""},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "", ""},
		{"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "", ""},
		{"", "", ""},
	} {
		if app, platform := InAppBrowser(c.ua); app != c.app || platform != c.platform {
			t.Errorf("InAppBrowser(%q) = %q, %q; want %q, %q", c.ua, app, platform, c.app, c.platform)
		}
	}
}
