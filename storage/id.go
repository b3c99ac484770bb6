package storage

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// Wire ID prefixes (link's, which every store shares). On disk a record's
// key is its bucket sequence as an 8-byte big-endian key, so that keys sort
// in creation order; on the wire the sequence is hidden (see idCodec).
const (
	prefixWorkspace = link.PrefixWorkspace
	prefixUser      = link.PrefixUser
	prefixKey       = link.PrefixKey
	prefixLink      = link.PrefixLink
	prefixCampaign  = link.PrefixCampaign
	prefixEvent     = link.PrefixEvent
	prefixQRCode    = link.PrefixQRCode
)

// idBuckets names, for each prefix, the bucket whose sequence numbers its
// records. A file of schema version 1 gave out IDs that showed these
// sequences; the highest of each at the upgrade is its legacy maximum.
var idBuckets = map[string][]byte{
	prefixWorkspace:   bucketWorkspaces,
	prefixUser:        bucketUsers,
	prefixKey:         bucketKeys,
	prefixLink:        bucketLinks,
	prefixCampaign:    bucketCampaigns,
	prefixEvent:       bucketEvents,
	prefixQRCode:      bucketQRCodes,
	link.PrefixUTM:    bucketUTMTemplates,
	link.PrefixReport: bucketReports,
	prefixWebhook:     bucketWebhooks,
	prefixDelivery:    bucketDeliveries,
	prefixDomain:      bucketDomains,
}

// opaqueLen is the length of an opaque ID after its prefix.
const opaqueLen = link.IDOpaqueLen

const idAlphabet = link.IDAlphabet

// idCodec is the data file's link.IDCodec (see there for the form of a
// wire ID), under the random key kept in the file and with the legacy
// maxima of a file upgraded from schema version 1.
type idCodec struct {
	codec  *link.IDCodec
	legacy map[string]uint64 // prefix → highest sequence with a legacy ID
}

// newIDCodec returns the codec of key (16 bytes) and the legacy maxima.
func newIDCodec(key []byte, legacy map[string]uint64) (*idCodec, error) {
	c, err := link.NewIDCodec(key, legacy)
	if err != nil {
		return nil, err
	}
	return &idCodec{codec: c, legacy: legacy}, nil
}

// formatID returns the wire ID of the record with sequence seq.
func (c *idCodec) formatID(prefix string, seq uint64) string { return c.codec.FormatID(prefix, seq) }

// appendID appends the wire ID of seq to b.
func (c *idCodec) appendID(b []byte, prefix string, seq uint64) []byte {
	return c.codec.AppendID(b, prefix, seq)
}

// parseID returns the sequence of a wire ID; false for anything formatID
// does not write (link.IDCodec.ParseID).
func (c *idCodec) parseID(prefix, id string) (uint64, bool) { return c.codec.ParseID(prefix, id) }

// idFormatter formats wire IDs: an idCodec, or an idMemo in front of one.
type idFormatter interface {
	formatID(prefix string, seq uint64) string
}

// idMemo remembers the IDs it formatted, for loops that format the same
// few IDs again and again (an export of raw clicks names a handful of
// links thousands of times). It holds at most idMemoSize IDs.
type idMemo struct {
	ids *idCodec
	m   map[idMemoKey]string
}

type idMemoKey struct {
	prefix string
	seq    uint64
}

const idMemoSize = 1 << 14

func newIDMemo(ids *idCodec) *idMemo {
	return &idMemo{ids: ids, m: make(map[idMemoKey]string)}
}

func (m *idMemo) formatID(prefix string, seq uint64) string {
	k := idMemoKey{prefix, seq}
	if id, ok := m.m[k]; ok {
		return id
	}
	if len(m.m) >= idMemoSize {
		clear(m.m)
	}
	id := m.ids.formatID(prefix, seq)
	m.m[k] = id
	return id
}

// recordLegacyIDs is the step from schema version 1 to 2: the records
// that exist keep the IDs they were given (clients hold them), so the
// highest sequence of each prefix is recorded as its legacy maximum.
func recordLegacyIDs(tx *bolt.Tx) error {
	legacy := make(map[string]uint64, len(idBuckets))
	for prefix, name := range idBuckets {
		if seq := tx.Bucket(name).Sequence(); seq > 0 {
			legacy[prefix] = seq
		}
	}
	buf, err := json.Marshal(legacy)
	if err != nil {
		return fmt.Errorf("encode legacy ID maxima: %w", err)
	}
	if err := tx.Bucket(bucketMeta).Put(metaIDLegacyMax, buf); err != nil {
		return fmt.Errorf("record legacy ID maxima: %w", err)
	}
	return nil
}

// loadIDCodec returns the codec of the file, generating its ID key the
// first time (a new file, or one upgraded from version 1).
func loadIDCodec(tx *bolt.Tx) (*idCodec, error) {
	meta := tx.Bucket(bucketMeta)
	key := cloneBytes(meta.Get(metaIDKey))
	if key == nil {
		key = make([]byte, 16)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate ID key: %w", err)
		}
		if err := meta.Put(metaIDKey, key); err != nil {
			return nil, fmt.Errorf("store ID key: %w", err)
		}
	} else if len(key) != 16 {
		return nil, fmt.Errorf("ID key: %d bytes, want 16", len(key))
	}
	legacy := map[string]uint64{}
	if buf := meta.Get(metaIDLegacyMax); buf != nil {
		if err := json.Unmarshal(buf, &legacy); err != nil {
			return nil, fmt.Errorf("decode legacy ID maxima: %w", err)
		}
	}
	return newIDCodec(key, legacy)
}

// codecs finds the idCodec of an open file from its transactions, for
// helpers that have a transaction and no DB: *bolt.DB → *idCodec.
var codecs sync.Map

// idsOf returns the idCodec of the file tx belongs to.
func idsOf(tx *bolt.Tx) *idCodec {
	c, ok := codecs.Load(tx.DB())
	if !ok {
		panic("storage: no ID codec for an open data file")
	}
	return c.(*idCodec)
}
