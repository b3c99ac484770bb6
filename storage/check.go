package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/linkbolt/linkbolt/storage/internal/boltpage"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// maxProblems bounds the problems a check lists: as many as the page
// reader collects.
const maxProblems = boltpage.MaxProblems

// CheckReport is what CheckFile found in a data file.
type CheckReport struct {
	Path     string
	Size     int64 // bytes
	PageSize int
	Pages    uint64 // pages in use or free (the file's high-water mark)
	Free     int    // free pages
	Buckets  int    // top-level buckets
	Keys     int    // keys in every bucket
	// Problems lists what is wrong; empty when the file is whole.
	Problems []string
	// HeaderDamage is the problem of a damaged header page, when the file
	// opens from the other one; empty otherwise. It is among Problems.
	HeaderDamage string
}

// OK reports whether the check found nothing wrong.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// CheckFile checks the bbolt file at path without writing to it: the
// header pages (one damaged header page is a problem, though the file
// opens from the other), that the file holds every page they record, every page of
// every bucket and the free-page list (read through ReadAt, so a damaged
// page cannot fault), and then, when that structure is sound enough to
// map safely, bbolt's own consistency check (tx.Check: page types, key
// order, pages neither in use nor free), and then linkbolt's own
// invariants: every index entry names a record that names it back, and
// every counter equals its records (see checkInvariants). A file a server
// holds fails with
// an error matching ErrLocked; a damaged file is a report with problems,
// not an error.
func CheckFile(path string) (*CheckReport, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	r := &CheckReport{Path: path, Size: info.Size()}
	// The shared lock keeps a writer away while the file is read.
	ro, openErr := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(openErr, berrors.ErrTimeout) {
		return nil, &lockedError{path: path}
	} else if errors.Is(openErr, fs.ErrPermission) {
		return nil, openErr
	} else if openErr == nil {
		defer ro.Close()
	}
	bf, d, err := boltpage.Open(path)
	if err != nil {
		return nil, err
	}
	if d == nil {
		defer bf.Close()
		r.PageSize, r.Pages = bf.PageSize(), bf.Pages()
		if r.HeaderDamage = bf.HeaderDamage(); r.HeaderDamage != "" {
			r.Problems = append(r.Problems, r.HeaderDamage)
		}
		d = bf.Walk(true)
	}
	if d != nil {
		r.Problems = append(r.Problems, d.Problems...)
		return r, nil
	}
	if openErr != nil {
		r.Problems = []string{"bbolt cannot open it: " + openErr.Error()}
		return r, nil
	}
	if err := catchDamage(path, func() error { return boltCheck(ro, r) }); err != nil {
		r.Problems = append(r.Problems, err.Error())
	}
	if r.OK() {
		r.Problems = append(r.Problems, checkLinkbolt(ro)...)
	}
	return r, nil
}

// boltCheck runs tx.Check and counts buckets, keys and free pages.
func boltCheck(db *bolt.DB, r *CheckReport) error {
	return db.View(func(tx *bolt.Tx) error {
		found := len(r.Problems) // a damaged header page is no reason not to count
		for err := range tx.Check() {
			if len(r.Problems) < maxProblems {
				r.Problems = append(r.Problems, err.Error())
			}
		}
		if len(r.Problems) > found {
			return nil
		}
		r.Free = db.Stats().FreePageN
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			r.Buckets++
			r.Keys += b.Stats().KeyN
			return nil
		})
	})
}

// checkLinkbolt checks linkbolt's invariants (see checkInvariants) on a
// file whose structure is sound, and returns at most maxProblems of them.
// A bbolt file that is no linkbolt data file (no meta bucket) has none to
// check; a linkbolt file of an older schema version, whose buckets are
// created and filled when a server next opens it, only its search index.
func checkLinkbolt(db *bolt.DB) []string {
	var problems []string
	add := func(errs []error) {
		for _, err := range errs {
			if len(problems) < maxProblems {
				problems = append(problems, err.Error())
			}
		}
	}
	_ = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil // no linkbolt data file: restore refuses it
		}
		current := string(meta.Get(metaSchemaVersion)) == strconv.Itoa(SchemaVersion)
		if missing := missingBuckets(tx); current && len(missing) > 0 {
			// A server would create them empty, and an empty users.email
			// finds nobody: a backup without it restored to a file where
			// nobody could sign in.
			add(missing)
			return nil
		}
		if !current {
			if tx.Bucket(bucketLinks) != nil && tx.Bucket(bucketLinksSearch) != nil {
				add(guardCheck("the search index", func() []error { return checkSearchIndex(tx) }))
			}
			return nil
		}
		ids, err := loadIDCodec(tx)
		if err != nil {
			add([]error{err})
			return nil
		}
		codecs.Store(db, ids)
		defer codecs.Delete(db)
		add(guardCheck("the records", func() []error { return checkInvariants(tx) }))
		return nil
	})
	return problems
}

// guardCheck runs the checker of what, and reports a panic in it as a
// problem of the file: the checkers read keys and values of the lengths
// linkbolt writes, and one of a crafted file that slipped past their
// length checks (a 5-byte key in keys.hash) must be a report, not a
// crash of check or restore.
func guardCheck(what string, check func() []error) (errs []error) {
	defer func() {
		if p := recover(); p != nil {
			errs = append(errs, fmt.Errorf("%s: a key or value of the wrong shape, which linkbolt never writes (%v)", what, p))
		}
	}()
	return check()
}

// missingBuckets returns a problem for each bucket of the current schema
// that tx lacks; users.reset, clicks.backlog, qr_codes.logo and the
// orphans buckets came without a schema change, and a file no server has
// opened since may lack them.
func missingBuckets(tx *bolt.Tx) []error {
	var errs []error
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil && !bytes.Equal(name, bucketUsersReset) && !bytes.Equal(name, bucketClicksBacklog) && !bytes.Equal(name, bucketQRCodesLogo) &&
			!bytes.Equal(name, bucketOrphanCounts) && !bytes.Equal(name, bucketOrphanVisits) {
			errs = append(errs, fmt.Errorf("bucket %s is missing: the file is not whole (a server would start it empty)", name))
		}
	}
	return errs
}
