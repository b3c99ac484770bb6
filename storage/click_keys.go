package storage

// The keys of click aggregates: scopes, dimensions and their stored
// values, and the hours and days that periods are counted in.

import (
	"encoding/binary"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Scopes. A scope key names what an aggregate counts:
//
//	workspace  'w' + workspace id(8)
//	link       'l' + link id(8)
//	campaign   'c' + workspace id(8) + len(1) + campaign id
//
// The campaign's workspace is part of its key, so one workspace never reads
// another's campaign; the length byte keeps campaign keys prefix-free.
//
// Period blobs of workspaces and campaigns are keyed scope + period(4): a
// range of one scope is one Seek and a walk. A batch touches a handful of
// them. Period blobs of links are keyed 'l' + period(4) + link id(8),
// time first: a batch touches thousands of links, and time-first keys put
// all of them in the few pages of the current hour and day, instead of a
// page per link all over the file (which made every commit rewrite tens
// of megabytes). A link's range is read day by day (see Stats).
const (
	scopeKindWorkspace byte = 'w'
	scopeKindLink      byte = 'l'
	scopeKindCampaign  byte = 'c'
)

// maxCampaignIDLength bounds the campaign IDs a scope key can hold.
const maxCampaignIDLength = 64

func workspaceScope(wid uint64) []byte { return appendScope(nil, scopeKindWorkspace, wid) }
func linkScope(lid uint64) []byte      { return appendScope(nil, scopeKindLink, lid) }

func appendScope(b []byte, kind byte, id uint64) []byte {
	b = append(b, kind)
	return binary.BigEndian.AppendUint64(b, id)
}

// periodBlobKey returns the key of a scope's period blob.
func periodBlobKey(scope []byte, period uint32) []byte {
	return appendPeriodBlobKey(make([]byte, 0, len(scope)+4), scope, period)
}

func appendPeriodBlobKey(k, scope []byte, period uint32) []byte {
	if scope[0] == scopeKindLink {
		k = append(k, scopeKindLink)
		k = binary.BigEndian.AppendUint32(k, period)
		return append(k, scope[1:]...)
	}
	return binary.BigEndian.AppendUint32(append(k, scope...), period)
}

func campaignScope(wid uint64, campaign string) []byte {
	b := appendScope(make([]byte, 0, 10+len(campaign)), scopeKindCampaign, wid)
	b = append(b, byte(len(campaign)))
	return append(b, campaign...)
}

// validCampaignID reports whether id can be a campaign scope: 1 to 64
// characters of [A-Za-z0-9_-], as every wire ID is.
func validCampaignID(id string) bool {
	if id == "" || len(id) > maxCampaignIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Dimensions on disk: one byte in the keys of the dimension buckets.
// The order is link.Dimensions'.
const (
	dimLinks byte = iota
	dimReferrers
	dimCountries
	dimDevices
	dimBrowsers
	dimOS
	dimVariants // a link's A/B variants: only in link scopes, an optional last section
	numDims
)

var dimNames = [numDims]string{link.DimLinks, link.DimReferrers, link.DimCountries, link.DimDevices, link.DimBrowsers, link.DimOS, link.DimVariants}

// Values stored for what a click does not say.
const (
	directReferrer = "direct"
	unknownValue   = "unknown"
)

// Time units of aggregate keys: whole hours and whole UTC days since the
// Unix epoch, 4 bytes big-endian. Clicks before 1970 are refused.
const (
	secondsPerHour = 3600
	secondsPerDay  = 86400
	hoursPerDay    = 24
)

// maxClickTime is the latest click time accepted: unix nanoseconds hold
// until 2262.
var maxClickTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

func hourTime(h uint32) time.Time { return time.Unix(int64(h)*secondsPerHour, 0).UTC() }
