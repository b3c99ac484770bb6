package link

import (
	"context"
	"time"
)

// CheckStatus is what the last checks of a link's destination say.
type CheckStatus string

// The statuses of a destination check.
const (
	// CheckUnchecked: not checked yet (or the destination changed since).
	CheckUnchecked CheckStatus = "unchecked"
	// CheckOK: the destination answered, or failed fewer than
	// CheckFailuresBroken times in a row.
	CheckOK CheckStatus = "ok"
	// CheckBroken: the destination failed CheckFailuresBroken checks in a
	// row: no connection, no answer in time, or an answer that says the
	// page is gone or failing (see linkcheck.Classify).
	CheckBroken CheckStatus = "broken"
)

// CheckFailuresBroken is how many failed checks in a row make a link
// broken: one failure (a restart, a deploy) is checked again sooner, and
// a link that flaps does not send an event each time.
const CheckFailuresBroken = 2

// LinkCheck is the last check of a link's destination.
type LinkCheck struct {
	LinkID      string
	WorkspaceID string
	Status      CheckStatus
	// HTTPStatus is the final status of the last check (after redirects);
	// 0 when there was no answer.
	HTTPStatus int
	// Error says why the last check failed; "" when it did not.
	Error string
	// CheckedAt is the time of the last check; zero when unchecked.
	CheckedAt time.Time
	// Failures counts the failed checks in a row.
	Failures int
	// DestinationURL is the destination the check read.
	DestinationURL string
}

// Failed reports whether the check c describes failed (Error set).
func (c *LinkCheck) Failed() bool { return c.Error != "" }

// LinkCheckTarget is a link whose check is due, claimed by a checker.
type LinkCheckTarget struct {
	LinkID         string
	WorkspaceID    string
	DestinationURL string
	// Previous is the link's last check; Status CheckUnchecked when none.
	Previous LinkCheck
}

// LinkCheckService keeps the destination checks of the links of the
// workspaces that turned them on (Workspace.DestinationChecks). A link of
// such a workspace is enrolled by the first claim after its creation (or
// after the switch was turned on), due at once; turning the switch off
// forgets the workspace's checks. The next check's time is indexed, so a
// claim reads only due links. Redirects never read checks.
type LinkCheckService interface {
	// ClaimDueLinkChecks enrolls the links of the workspaces with checks
	// on that are not enrolled yet (at most limit per call, due at now),
	// and returns at most limit links whose check is due at now, oldest
	// due first, each due again at now+lease so that no other checker
	// (another instance) claims it meanwhile. Checks of deleted links are
	// dropped.
	ClaimDueLinkChecks(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]*LinkCheckTarget, error)
	// SaveLinkCheck records the check c of a link (its Status set by the
	// caller from Failures) and when to check it next. When the status
	// turns to broken, or from broken to ok, it writes the link.broken or
	// link.fixed event in the same transaction, the link with its check
	// as data. A check of a link deleted, or whose destination changed,
	// since its claim is not recorded. ENOTFOUND for an unknown link.
	SaveLinkCheck(ctx context.Context, c *LinkCheck, next time.Time) error
	// FindLinkChecks returns the checks of the workspace's links among ids
	// (links never checked are missing from the map).
	FindLinkChecks(ctx context.Context, workspaceID string, ids []string) (map[string]*LinkCheck, error)
	// ResetLinkCheck forgets the check of a link of a workspace with checks
	// on and makes it due at now: its destination changed.
	ResetLinkCheck(ctx context.Context, workspaceID, id string, now time.Time) error
}

// CheckEvent returns the event of a change of a link's check status from
// before to after: link.broken when it turns broken, link.fixed when it
// turns ok from broken, else "" (the stores write it with the change).
func CheckEvent(before, after CheckStatus) string {
	switch {
	case after == CheckBroken && before != CheckBroken:
		return EventLinkBroken
	case after == CheckOK && before == CheckBroken:
		return EventLinkFixed
	}
	return ""
}
