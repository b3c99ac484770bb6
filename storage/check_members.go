package storage

import (
	"fmt"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// checkMembers compares the two directions of each membership, checks that
// each workspace keeps an owner and that nobody is member and former member
// at once.
func checkMembers(tx *bolt.Tx) []error {
	var errs []error
	byWS := map[string]string{}
	owners := map[uint64]int{}
	_ = tx.Bucket(bucketWorkspaceMembers).ForEach(func(k, v []byte) error {
		if len(k) != 16 {
			errs = append(errs, fmt.Errorf("workspaces.members key %x: %d bytes", k, len(k)))
			return nil
		}
		byWS[string(concat(k[8:], k[:8]))] = string(v)
		var m memberRecord
		if err := decodeJSON(v, &m); err != nil {
			errs = append(errs, err)
			return nil
		}
		if m.Role == link.RoleOwner {
			owners[btoi(k[:8])]++
		}
		if tx.Bucket(bucketWorkspaces).Get(k[:8]) == nil || tx.Bucket(bucketUsers).Get(k[8:]) == nil {
			errs = append(errs, fmt.Errorf("workspaces.members %x: workspace or user missing", k))
		}
		if tx.Bucket(bucketWorkspaceFormer).Get(k) != nil {
			errs = append(errs, fmt.Errorf("workspaces.former %x: a member is also a former member", k))
		}
		return nil
	})
	byUser := map[string]string{}
	_ = tx.Bucket(bucketUserWorkspaces).ForEach(func(k, v []byte) error { byUser[string(k)] = string(v); return nil })
	for k, v := range byWS {
		if byUser[k] != v {
			errs = append(errs, fmt.Errorf("users.workspaces %x: %q, workspaces.members has %q", k, byUser[k], v))
		}
	}
	for k := range byUser {
		if _, ok := byWS[k]; !ok {
			errs = append(errs, fmt.Errorf("users.workspaces %x: dangling", k))
		}
	}
	_ = tx.Bucket(bucketWorkspaces).ForEach(func(k, _ []byte) error {
		if owners[btoi(k)] == 0 {
			errs = append(errs, fmt.Errorf("workspace %x has no owner", k))
		}
		return nil
	})
	return errs
}

// checkInvitations checks the token and workspace indexes of invitations.
func checkInvitations(tx *bolt.Tx) []error {
	var errs []error
	wantHash := map[string]uint64{}
	wantWS := map[string]bool{}
	_ = tx.Bucket(bucketInvitations).ForEach(func(k, v []byte) error {
		var rec invitationRecord
		if err := decodeJSON(v, &rec); err != nil {
			errs = append(errs, err)
			return nil
		}
		wantHash[string(rec.TokenHash)] = btoi(k)
		wantWS[string(concat(itob(rec.Workspace), k))] = true
		if tx.Bucket(bucketWorkspaces).Get(itob(rec.Workspace)) == nil {
			errs = append(errs, fmt.Errorf("invitation %x: workspace %d missing", k, rec.Workspace))
		}
		return nil
	})
	gotHash := map[string]uint64{}
	_ = tx.Bucket(bucketInvitationsHash).ForEach(func(k, v []byte) error { gotHash[string(k)] = btoi(v); return nil })
	for h, id := range wantHash {
		if got, ok := gotHash[h]; !ok || got != id {
			errs = append(errs, fmt.Errorf("invitations.hash %x: names %d, want %d", h, got, id))
		}
	}
	for h := range gotHash {
		if _, ok := wantHash[h]; !ok {
			errs = append(errs, fmt.Errorf("invitations.hash %x: dangling", h))
		}
	}
	gotWS := map[string]bool{}
	_ = tx.Bucket(bucketInvitationsWorkspace).ForEach(func(k, _ []byte) error { gotWS[string(k)] = true; return nil })
	for k := range wantWS {
		if !gotWS[k] {
			errs = append(errs, fmt.Errorf("invitation %x: no invitations.workspace entry", k))
		}
	}
	for k := range gotWS {
		if !wantWS[k] {
			errs = append(errs, fmt.Errorf("invitations.workspace %x: dangling", k))
		}
	}
	return errs
}
