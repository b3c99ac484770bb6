package storage

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// indexCrawlable moves the links.crawlable entry of link idb from what
// was (nil: a new link) to what is (nil: a deleted one): an entry for
// each crawlable one, by its domain and alias.
func indexCrawlable(tx *bolt.Tx, was, is *linkRecord, idb []byte) error {
	b := tx.Bucket(bucketLinksCrawlable)
	if was != nil && was.Crawlable && (is == nil || !is.Crawlable || is.Alias != was.Alias || is.Domain != was.Domain) {
		if err := b.Delete(aliasKey(was.Domain, was.Alias)); err != nil {
			return fmt.Errorf("unindex crawlable: %w", err)
		}
	}
	if is != nil && is.Crawlable {
		if err := b.Put(aliasKey(is.Domain, is.Alias), idb); err != nil {
			return fmt.Errorf("index crawlable: %w", err)
		}
	}
	return nil
}

// CrawlableAliases returns the aliases of the crawlable links on the
// domain, in order, at most limit of them.
func (s *LinkService) CrawlableAliases(ctx context.Context, domain string, limit int) ([]string, error) {
	prefix := aliasKey(strings.ToLower(domain), "")
	var out []string
	err := s.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketLinksCrawlable).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
			out = append(out, string(k[len(prefix):]))
		}
		return nil
	})
	return out, err
}
