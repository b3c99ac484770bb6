package storage

import (
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// linkLimitsRecord is the part of a link record that holds the link
// controls of expiry and limits; encoded inline in linkRecord, each field
// left out at its zero value so that plain links keep their size.
type linkLimitsRecord struct {
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	MaxClicks  int64      `json:"max_clicks,omitempty"`
	ExpiredURL string     `json:"expired_url,omitempty"`
	Archived   bool       `json:"archived,omitempty"`
	Title      string     `json:"title,omitempty"`
	Note       string     `json:"note,omitempty"`
}

func limitsRecord(c link.LinkLimits) linkLimitsRecord {
	r := linkLimitsRecord{MaxClicks: c.MaxClicks, ExpiredURL: c.ExpiredURL, Archived: c.Archived, Title: c.Title, Note: c.Note}
	if c.ExpiresAt != nil {
		t := c.ExpiresAt.UTC()
		r.ExpiresAt = &t
	}
	return r
}

func (r *linkLimitsRecord) limits() link.LinkLimits {
	c := link.LinkLimits{MaxClicks: r.MaxClicks, ExpiredURL: r.ExpiredURL, Archived: r.Archived, Title: r.Title, Note: r.Note}
	if r.ExpiresAt != nil {
		t := *r.ExpiresAt
		c.ExpiresAt = &t
	}
	return c
}

// countArchived keeps the workspace's count of archived links as a link
// goes from archived was to archived is (false, false for a plain link:
// nothing to do).
func countArchived(tx *bolt.Tx, wid uint64, was, is bool) error {
	switch {
	case was == is:
		return nil
	case is:
		return addCounter(tx.Bucket(bucketLinksArchived), itob(wid), 1)
	default:
		return addCounter(tx.Bucket(bucketLinksArchived), itob(wid), -1)
	}
}

// filterArchived adds the archived filter to the query. A workspace with
// no archived link needs none for the default list (ArchivedExclude), so
// that the list keeps reading its total from a counter and stops at the
// end of the page; otherwise the records are read and tested, as the
// other filters that need them are.
func (q *linkQuery) filterArchived(tx *bolt.Tx, wid uint64, f link.ArchivedFilter) error {
	if f == link.ArchivedAll {
		return nil
	}
	n, err := counter(tx.Bucket(bucketLinksArchived), itob(wid))
	if err != nil {
		return err
	}
	want := f == link.ArchivedOnly
	if !want && n == 0 {
		return nil
	}
	match := q.match
	q.match = func(r *linkRecord) bool {
		return r.Archived == want && (match == nil || match(r))
	}
	return nil
}
