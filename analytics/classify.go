package analytics

import (
	"net/netip"

	"github.com/linkbolt/linkbolt/link"
)

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
