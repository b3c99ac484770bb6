package storage

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// A raw click is
//
//	flags(1)              bit 0: bot; bit 1: a campaign follows;
//	                      bit 2: the referrer is a host reference
//	uvarint(link id)
//	[uvarint(len) campaign id]
//	referrer              uvarint(host id) with bit 2, else uvarint(len) value
//	uvarint(len) value    four times: country, device, browser, os
//	visitor(8)
//	[variant(1)]          with bit 3: the A/B variant, from 1
//
// under the key workspace id(8) + unix nanos(8) + sequence(4). Never the
// address or the user agent.
//
// Referrer hosts are kept once per workspace and UTC day in clicks.hosts
// (see hostTable), and a raw click names its host by id: a host of 240
// bytes clicked 300,000 times costs its bytes once, not on every click.
// Raw clicks written before (no bit 2) keep the host inline, and still
// read.
const (
	rawFlagBot      = 1 << 0
	rawFlagCampaign = 1 << 1
	rawFlagHostRef  = 1 << 2
	rawFlagVariant  = 1 << 3
	// rawFlagCodes: the referrer (when inline) and the four values after
	// it are short values (see readShortValue), "unknown" one byte
	// instead of eight. Set when each is at most maxShortValue bytes
	// (schema version 5).
	rawFlagCodes = 1 << 4
)

// rawStrings are the string fields of a raw click after the campaign, in
// their order on disk; their indexes are the string dimensions'.
var rawStrings = [...]byte{dimReferrers, dimCountries, dimDevices, dimBrowsers, dimOS}

// rawReferrer is how a raw click stores its referrer: the id of its host
// in clicks.hosts (ref), or a value inline.
type rawReferrer struct {
	ref    bool
	id     uint64
	inline string
}

func appendRawClick(b []byte, c *parsedClick, ref rawReferrer) []byte {
	var flags byte
	if c.bot {
		flags |= rawFlagBot
	}
	if c.campaign != "" {
		flags |= rawFlagCampaign
	}
	if ref.ref {
		flags |= rawFlagHostRef
	}
	if c.variant != 0 {
		flags |= rawFlagVariant
	}
	short := ref.ref || len(ref.inline) <= maxShortValue
	for _, d := range rawStrings[1:] {
		short = short && len(c.vals[d]) <= maxShortValue
	}
	appendValue := appendLenString
	if short {
		flags |= rawFlagCodes
		appendValue = appendShortValue
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, c.link)
	if c.campaign != "" {
		b = appendLenString(b, c.campaign)
	}
	if ref.ref {
		b = binary.AppendUvarint(b, ref.id)
	} else {
		b = appendValue(b, ref.inline)
	}
	for _, d := range rawStrings[1:] {
		b = appendValue(b, c.vals[d])
	}
	b = binary.BigEndian.AppendUint64(b, c.visitor)
	if c.variant != 0 {
		b = append(b, c.variant)
	}
	return b
}

var errBadRawClick = errors.New("malformed raw click")

// decodeRawClick fills c from a raw click's key and value; str turns bytes
// into strings (so an export can share repeated values), and host returns
// the host of an id of the click's workspace and UTC day.
func decodeRawClick(ids idFormatter, k, v []byte, c *link.Click, str func([]byte) string, host func(day uint32, id uint64) (string, error)) error {
	if len(k) != 20 || len(v) < 2 {
		return errBadRawClick
	}
	c.WorkspaceID = ids.formatID(prefixWorkspace, binary.BigEndian.Uint64(k))
	nanos := binary.BigEndian.Uint64(k[8:])
	c.Time = time.Unix(0, int64(nanos)).UTC()
	flags := v[0]
	v = v[1:]
	c.Bot = flags&rawFlagBot != 0
	lid, n := binary.Uvarint(v)
	if n <= 0 {
		return errBadRawClick
	}
	v = v[n:]
	c.LinkID = ids.formatID(prefixLink, lid)
	readString := func() (string, bool) {
		b, rest, ok := readLenBytes(v)
		if !ok {
			return "", false
		}
		v = rest
		return str(b), true
	}
	c.CampaignID = ""
	if flags&rawFlagCampaign != 0 {
		s, ok := readString()
		if !ok {
			return errBadRawClick
		}
		c.CampaignID = s
	}
	fields := []*string{&c.Referrer, &c.Country, &c.Device, &c.Browser, &c.OS}
	if flags&rawFlagHostRef != 0 {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return errBadRawClick
		}
		v = v[n:]
		h, err := host(uint32(nanos/1e9/secondsPerDay), id)
		if err != nil {
			return err
		}
		c.Referrer, fields = h, fields[1:]
	}
	readValue := readLenBytes
	if flags&rawFlagCodes != 0 {
		readValue = readShortValue
	}
	for _, f := range fields {
		b, rest, ok := readValue(v)
		if !ok {
			return errBadRawClick
		}
		*f, v = str(b), rest
	}
	c.Variant = 0
	if flags&rawFlagVariant != 0 {
		if len(v) != 9 || v[8] == 0 {
			return errBadRawClick
		}
		c.Variant, v = v[8], v[:8]
	}
	if len(v) != 8 {
		return errBadRawClick
	}
	c.Visitor = binary.BigEndian.Uint64(v)
	return nil
}
