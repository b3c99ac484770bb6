package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Link records are stored in a binary form (schema version 4): at a
// million links the records are the largest part of a file without
// clicks, and a redirect the cache misses decodes one. A record is
//
//	0x01, flags (uvarint), workspace (uvarint), alias, domain,
//	destination, created at, redirect code (uvarint),
//
// then, each only when its flag says so: updated at, tags (a uvarint
// count, then each), UTM source, medium and campaign, campaign ID,
// password hash, rules, variants, social card, expiry, click limit
// (varint), expired URL, title, external ID, iOS and Android
// destinations, note. A string is a uvarint length and its
// bytes; a time is its Unix seconds (varint) and nanoseconds (uvarint),
// read back in UTC. A rule is its device, OS, browser, country, language,
// a byte of flags for what follows (ruleQuery, ruleIP, ruleAfter,
// ruleBefore; 0 for none), the query's name and value, the IP ranges (a
// uvarint count, then each as its address's 4 or 16 bytes as a string and
// its prefix length as a byte), the instants after and before, and its
// destination; a variant its destination and weight (uvarint); a social
// card its title, description and image URL.
//
// Records of schema version 3 and before are JSON, which always starts
// with '{'; decodeLink reads both, and Open rewrites the JSON ones (see
// upgradeLinkRecords).
const linkCodecBinary = 0x01

// The flags of a binary link record.
const (
	lfUpdated      = 1 << iota // updated at differs from created at
	lfTags                     // tags follow
	lfUTMSource                // the UTM source follows
	lfUTMMedium                // the UTM medium follows
	lfUTMCampaign              // the UTM campaign follows
	lfCampaign                 // the campaign ID follows
	lfPassword                 // the password hash follows
	lfRules                    // rules follow
	lfVariants                 // variants follow
	lfOG                       // a social card follows
	lfExpires                  // an expiry follows
	lfMaxClicks                // a click limit follows
	lfExpiredURL               // the expired URL follows
	lfTitle                    // the title follows
	lfArchived                 // the link is archived (nothing follows)
	lfForwardPath              // the link forwards the visitor's path (nothing follows)
	lfForwardQuery             // the link forwards the visitor's query (nothing follows)
	lfExternalID               // the external ID follows
	lfIOS                      // the iOS destination follows
	lfAndroid                  // the Android destination follows
	lfCrawlable                // the link may be indexed (nothing follows)
	lfPublicStats              // the link's statistics are public (nothing follows)
	lfEscapeInApp              // the link sends in-app browsers on (nothing follows)
	lfRetargeting              // the link fires the workspace's pixels (nothing follows)
	lfNote                     // the note follows
	lfAll          = 1<<iota - 1
)

// appendLink appends the binary form of r to dst.
func appendLink(dst []byte, r *linkRecord) []byte {
	var flags uint64
	set := func(f uint64, on bool) {
		if on {
			flags |= f
		}
	}
	set(lfUpdated, !r.UpdatedAt.Equal(r.CreatedAt))
	set(lfTags, len(r.Tags) > 0)
	set(lfUTMSource, r.UTMSource != "")
	set(lfUTMMedium, r.UTMMedium != "")
	set(lfUTMCampaign, r.UTMCampaign != "")
	set(lfCampaign, r.CampaignID != "")
	set(lfPassword, r.Password != "")
	set(lfRules, len(r.Rules) > 0)
	set(lfVariants, len(r.Variants) > 0)
	set(lfOG, r.OG != nil)
	set(lfExpires, r.ExpiresAt != nil)
	set(lfMaxClicks, r.MaxClicks != 0)
	set(lfExpiredURL, r.ExpiredURL != "")
	set(lfTitle, r.Title != "")
	set(lfArchived, r.Archived)
	set(lfForwardPath, r.ForwardPath)
	set(lfForwardQuery, r.ForwardQuery)
	set(lfExternalID, r.ExternalID != "")
	set(lfIOS, r.IOS != "")
	set(lfAndroid, r.Android != "")
	set(lfCrawlable, r.Crawlable)
	set(lfPublicStats, r.PublicStats)
	set(lfEscapeInApp, r.EscapeInApp)
	set(lfRetargeting, r.Retargeting)
	set(lfNote, r.Note != "")

	dst = append(dst, linkCodecBinary)
	dst = binary.AppendUvarint(dst, flags)
	dst = binary.AppendUvarint(dst, r.Workspace)
	dst = appendLenString(dst, r.Alias)
	dst = appendLenString(dst, r.Domain)
	dst = appendLenString(dst, r.Destination)
	dst = appendLinkTime(dst, r.CreatedAt)
	dst = binary.AppendUvarint(dst, uint64(r.RedirectCode))
	if flags&lfUpdated != 0 {
		dst = appendLinkTime(dst, r.UpdatedAt)
	}
	if flags&lfTags != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(r.Tags)))
		for _, t := range r.Tags {
			dst = appendLenString(dst, t)
		}
	}
	for _, f := range []struct {
		flag uint64
		s    string
	}{{lfUTMSource, r.UTMSource}, {lfUTMMedium, r.UTMMedium}, {lfUTMCampaign, r.UTMCampaign},
		{lfCampaign, r.CampaignID}, {lfPassword, r.Password}} {
		if flags&f.flag != 0 {
			dst = appendLenString(dst, f.s)
		}
	}
	if flags&lfRules != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(r.Rules)))
		for _, x := range r.Rules {
			for _, s := range []string{x.Device, x.OS, x.Browser, x.Country, x.Language} {
				dst = appendLenString(dst, s)
			}
			dst = appendRuleExtras(dst, &x)
			dst = appendLenString(dst, x.Then)
		}
	}
	if flags&lfVariants != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(r.Variants)))
		for _, v := range r.Variants {
			dst = appendLenString(dst, v.Destination)
			dst = binary.AppendUvarint(dst, uint64(v.Weight))
		}
	}
	if flags&lfOG != 0 {
		dst = appendLenString(dst, r.OG.Title)
		dst = appendLenString(dst, r.OG.Description)
		dst = appendLenString(dst, r.OG.ImageURL)
	}
	if flags&lfExpires != 0 {
		dst = appendLinkTime(dst, *r.ExpiresAt)
	}
	if flags&lfMaxClicks != 0 {
		dst = binary.AppendVarint(dst, r.MaxClicks)
	}
	if flags&lfExpiredURL != 0 {
		dst = appendLenString(dst, r.ExpiredURL)
	}
	if flags&lfTitle != 0 {
		dst = appendLenString(dst, r.Title)
	}
	if flags&lfExternalID != 0 {
		dst = appendLenString(dst, r.ExternalID)
	}
	if flags&lfIOS != 0 {
		dst = appendLenString(dst, r.IOS)
	}
	if flags&lfAndroid != 0 {
		dst = appendLenString(dst, r.Android)
	}
	if flags&lfNote != 0 {
		dst = appendLenString(dst, r.Note)
	}
	return dst
}

func appendLinkTime(dst []byte, t time.Time) []byte {
	return binary.AppendUvarint(binary.AppendVarint(dst, t.Unix()), uint64(t.Nanosecond()))
}

// errLinkRecord is the error of a record decodeLink cannot read.
var errLinkRecord = errors.New("malformed link record")

// decodeLink decodes a link record, binary or JSON (a file not yet
// upgraded). A binary record's strings share one allocation.
func decodeLink(raw []byte, r *linkRecord) error {
	if len(raw) > 0 && raw[0] == '{' {
		*r = linkRecord{}
		return decodeJSON(raw, r)
	}
	if len(raw) == 0 || raw[0] != linkCodecBinary {
		return fmt.Errorf("decode record: %w", errLinkRecord)
	}
	d := linkDecoder{s: string(raw), i: 1}
	flags := d.uvarint()
	if flags&^lfAll != 0 {
		return fmt.Errorf("decode record: %w: unknown flags %#x", errLinkRecord, flags)
	}
	*r = linkRecord{
		Workspace:   d.uvarint(),
		Alias:       d.str(),
		Domain:      d.str(),
		Destination: d.str(),
		CreatedAt:   d.time(),
	}
	r.RedirectCode = d.int()
	r.UpdatedAt = r.CreatedAt
	if flags&lfUpdated != 0 {
		r.UpdatedAt = d.time()
	}
	if flags&lfTags != 0 {
		r.Tags = make([]string, d.count())
		for i := range r.Tags {
			r.Tags[i] = d.str()
		}
	}
	for _, f := range []struct {
		flag uint64
		s    *string
	}{{lfUTMSource, &r.UTMSource}, {lfUTMMedium, &r.UTMMedium}, {lfUTMCampaign, &r.UTMCampaign},
		{lfCampaign, &r.CampaignID}, {lfPassword, &r.Password}} {
		if flags&f.flag != 0 {
			*f.s = d.str()
		}
	}
	if flags&lfRules != 0 {
		r.Rules = make([]ruleRecord, d.count())
		for i := range r.Rules {
			x := &r.Rules[i]
			x.Device, x.OS, x.Browser, x.Country, x.Language = d.str(), d.str(), d.str(), d.str(), d.str()
			d.ruleExtras(x)
			x.Then = d.str()
		}
	}
	if flags&lfVariants != 0 {
		r.Variants = make([]variantRecord, d.count())
		for i := range r.Variants {
			r.Variants[i] = variantRecord{Destination: d.str(), Weight: d.int()}
		}
	}
	if flags&lfOG != 0 {
		r.OG = &ogRecord{Title: d.str(), Description: d.str(), ImageURL: d.str()}
	}
	if flags&lfExpires != 0 {
		t := d.time()
		r.ExpiresAt = &t
	}
	if flags&lfMaxClicks != 0 {
		r.MaxClicks = d.varint()
	}
	if flags&lfExpiredURL != 0 {
		r.ExpiredURL = d.str()
	}
	if flags&lfTitle != 0 {
		r.Title = d.str()
	}
	if flags&lfExternalID != 0 {
		r.ExternalID = d.str()
	}
	if flags&lfIOS != 0 {
		r.IOS = d.str()
	}
	if flags&lfAndroid != 0 {
		r.Android = d.str()
	}
	if flags&lfNote != 0 {
		r.Note = d.str()
	}
	r.Archived = flags&lfArchived != 0
	r.ForwardPath = flags&lfForwardPath != 0
	r.ForwardQuery = flags&lfForwardQuery != 0
	r.Crawlable = flags&lfCrawlable != 0
	r.PublicStats = flags&lfPublicStats != 0
	r.EscapeInApp = flags&lfEscapeInApp != 0
	r.Retargeting = flags&lfRetargeting != 0
	if d.err || d.i != len(d.s) {
		*r = linkRecord{}
		return fmt.Errorf("decode record: %w", errLinkRecord)
	}
	return nil
}

// linkDecoder reads a binary link record; a read past its end or a
// malformed number sets err and yields zero values from then on.
type linkDecoder struct {
	s   string
	i   int
	err bool
}

func (d *linkDecoder) fail() { d.err, d.i = true, len(d.s) }

func (d *linkDecoder) byte() byte {
	if d.i >= len(d.s) {
		d.fail()
		return 0
	}
	d.i++
	return d.s[d.i-1]
}

func (d *linkDecoder) uvarint() uint64 {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if d.i >= len(d.s) {
			break
		}
		c := d.s[d.i]
		d.i++
		if c < 0x80 {
			if shift == 63 && c > 1 {
				break
			}
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
	}
	d.fail()
	return 0
}

func (d *linkDecoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// int reads a uvarint that must fit an int32 (a redirect code, a weight).
func (d *linkDecoder) int() int {
	v := d.uvarint()
	if v > 1<<31-1 {
		d.fail()
		return 0
	}
	return int(v)
}

// count reads the length of a list, each of whose items takes a byte at
// least: a damaged count cannot ask for more than the record holds.
func (d *linkDecoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *linkDecoder) str() string {
	n := d.count() // a byte a character
	s := d.s[d.i : d.i+n]
	d.i += n
	return s
}

func (d *linkDecoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// putLink stores the binary record of the link under key.
func putLink(b *bolt.Bucket, key []byte, r *linkRecord) error {
	if err := b.Put(key, appendLink(nil, r)); err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	return nil
}

// getLink decodes the link record under key into r; it reports false when
// there is none.
func getLink(b *bolt.Bucket, key []byte, r *linkRecord) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := decodeLink(raw, r); err != nil {
		return false, fmt.Errorf("link %x: %w", key, err)
	}
	return true, nil
}

// Keys of the meta bucket for the upgrade of link records to the binary
// form: metaLinkCodec says every record is binary (but one that did not
// decode, left as it was); metaLinkCodecFrom,
// while the upgrade runs, the first link ID not yet rewritten.
var (
	metaLinkCodec     = []byte("link_records_binary")
	metaLinkCodecFrom = []byte("link_records_binary_from")
)

// linkUpgradeChunk is how many link records one transaction of the
// upgrade rewrites: its memory is that of one chunk, not of the file.
var linkUpgradeChunk = 20_000

// upgradeLinkRecords rewrites the JSON link records of a file of schema
// version 3 or before in the binary form, linkUpgradeChunk of them a
// transaction, in ID order. Each transaction records where the next one
// starts, so a process killed midway carries on at its next start; as
// decodeLink reads both forms, a half-upgraded file reads right (and the
// schema version already says 4, so an older linkbolt refuses it). A
// record that does not decode is left as it was, with a warning. It
// returns the number of records rewritten.
func upgradeLinkRecords(bdb *bolt.DB, log *slog.Logger) (int, error) {
	var done bool
	if err := bdb.View(func(tx *bolt.Tx) error {
		done = tx.Bucket(bucketMeta).Get(metaLinkCodec) != nil
		return nil
	}); err != nil || done {
		return 0, err
	}
	start := time.Now()
	total := 0
	for !done {
		n, damaged, finished, err := upgradeLinkChunk(bdb, linkUpgradeChunk)
		if err != nil {
			return total, fmt.Errorf("upgrade link records: %w", err)
		}
		for _, d := range damaged {
			log.Warn("a link record does not decode: it is left as it was (reading that link fails, as before the upgrade); `linkbolt check` reports it",
				"link", fmt.Sprintf("%x", d.key), "err", d.err)
		}
		total, done = total+n, finished
	}
	if total > 0 {
		log.Info("rewrote the link records in their binary form", "links", total, "took", time.Since(start).Round(time.Millisecond))
	}
	return total, nil
}

// damagedLink is a link record the upgrade could not decode.
type damagedLink struct {
	key []byte
	err error
}

// upgradeLinkChunk rewrites the JSON records among the next chunk links
// in one transaction; it returns how many it rewrote, the records it left
// because they do not decode, and whether the upgrade is done (which it
// then records).
func upgradeLinkChunk(bdb *bolt.DB, chunk int) (n int, damaged []damagedLink, done bool, err error) {
	err = bdb.Update(func(tx *bolt.Tx) error {
		damaged = nil
		meta, links := tx.Bucket(bucketMeta), tx.Bucket(bucketLinks)
		c := links.Cursor()
		k, v := c.First()
		if from := meta.Get(metaLinkCodecFrom); len(from) == 8 {
			k, v = c.Seek(cloneBytes(from))
		}
		type rewrite struct{ k, v []byte }
		var out []rewrite
		read := 0
		for ; k != nil && read < chunk; k, v = c.Next() {
			read++
			if len(v) == 0 || v[0] != '{' {
				continue // already binary (written since the upgrade began)
			}
			var rec linkRecord
			if err := decodeLink(v, &rec); err != nil {
				// Damage is for linkbolt check to report and a backup to
				// mend: failing the start for one record would take every
				// other link down with it.
				damaged = append(damaged, damagedLink{cloneBytes(k), err})
				continue
			}
			out = append(out, rewrite{cloneBytes(k), appendLink(nil, &rec)})
		}
		// The cursor's position is lost once the bucket changes: the keys
		// were copied first.
		for _, r := range out {
			if err := links.Put(r.k, r.v); err != nil {
				return err
			}
		}
		n = len(out)
		var err error
		done, err = markResumable(meta, metaLinkCodecFrom, metaLinkCodec, k)
		return err
	})
	if err != nil {
		return 0, nil, false, err
	}
	return n, damaged, done, nil
}

// The flags of a rule's conditions beyond its five strings. A record
// written before IP ranges and instants has 0 or ruleQuery.
const (
	ruleQuery  = 1 << iota // the query's name and value follow
	ruleIP                 // IP ranges follow
	ruleAfter              // the instant after follows
	ruleBefore             // the instant before follows
	ruleAll    = 1<<iota - 1
)

// appendRuleExtras appends the flags of x's conditions beyond its five
// strings, then the conditions.
func appendRuleExtras(dst []byte, x *ruleRecord) []byte {
	var flags byte
	if x.HasQuery {
		flags |= ruleQuery
	}
	if len(x.IP) > 0 {
		flags |= ruleIP
	}
	if x.After != nil {
		flags |= ruleAfter
	}
	if x.Before != nil {
		flags |= ruleBefore
	}
	dst = append(dst, flags)
	if x.HasQuery {
		dst = appendLenString(dst, x.QueryName)
		dst = appendLenString(dst, x.QueryValue)
	}
	if len(x.IP) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(x.IP)))
		for _, p := range x.IP {
			a := p.Addr().AsSlice()
			dst = binary.AppendUvarint(dst, uint64(len(a)))
			dst = append(dst, a...)
			dst = append(dst, byte(p.Bits()))
		}
	}
	if x.After != nil {
		dst = appendLinkTime(dst, *x.After)
	}
	if x.Before != nil {
		dst = appendLinkTime(dst, *x.Before)
	}
	return dst
}

// ruleExtras reads what appendRuleExtras wrote onto x.
func (d *linkDecoder) ruleExtras(x *ruleRecord) {
	flags := d.byte()
	if flags&^ruleAll != 0 {
		d.fail()
		return
	}
	if flags&ruleQuery != 0 {
		x.HasQuery, x.QueryName, x.QueryValue = true, d.str(), d.str()
	}
	if flags&ruleIP != 0 {
		x.IP = make([]netip.Prefix, d.count())
		for i := range x.IP {
			a, ok := netip.AddrFromSlice([]byte(d.str()))
			p := netip.PrefixFrom(a, int(d.byte()))
			if !ok || !p.IsValid() {
				d.fail()
				return
			}
			x.IP[i] = p
		}
	}
	if flags&ruleAfter != 0 {
		t := d.time()
		x.After = &t
	}
	if flags&ruleBefore != 0 {
		t := d.time()
		x.Before = &t
	}
}
