package analytics

import (
	"testing"
)

func BenchmarkBotTokens(b *testing.B) {
	ua := uaCases[0].ua // a browser: the whole string is scanned
	b.ReportAllocs()
	for b.Loop() {
		botTokens.match(ua)
	}
}
