package analytics

import "testing"

func TestPreviewBotsAreBots(t *testing.T) {
	for _, ua := range []string{
		"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
		"Twitterbot/1.0",
		"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
		"WhatsApp/2.23.20.0",
		"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
		"TelegramBot (like TwitterBot)",
	} {
		if !PreviewBot(ua) {
			t.Errorf("PreviewBot(%q) = false", ua)
		}
		if c := ClassifyUA(ua); !c.Bot {
			t.Errorf("ClassifyUA(%q) is not a bot: a preview fetch must count as a bot click", ua)
		}
	}
	for _, ua := range []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36",
		"curl/8.4.0", "",
	} {
		if PreviewBot(ua) {
			t.Errorf("PreviewBot(%q) = true", ua)
		}
	}
}
