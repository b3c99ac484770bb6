package analytics

// previewTokens mark the user agents of link-preview bots (unfurlers):
// the services that fetch a shared link to show a card for it. They are
// all in botFamilies too, so a click they make is a bot click.
var previewTokens = []string{
	"slackbot", "facebookexternalhit", "facebot", "twitterbot", "linkedinbot", "whatsapp/",
	"discordbot", "telegrambot", "skypeuripreview", "redditbot", "mastodon/", "pinterestbot",
	"cardyb", "snap url preview", "vkshare", "iframely", "embedly",
}

var previewMatcher = newTokenMatcher(map[string][]string{"": previewTokens})

// PreviewBot reports whether ua is a link-preview bot's, which is shown a
// link's social card instead of its redirect.
func PreviewBot(ua string) bool {
	if len(ua) > MaxUALength {
		ua = ua[:MaxUALength]
	}
	_, ok := previewMatcher.match(ua)
	return ok
}
