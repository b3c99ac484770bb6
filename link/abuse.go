package link

import (
	"context"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// The reasons a visitor may report a short link for.
const (
	AbusePhishing = "phishing"
	AbuseMalware  = "malware"
	AbuseSpam     = "spam"
	AbuseIllegal  = "illegal"
	AbuseOther    = "other"
)

// AbuseReasons are the reasons, in the order a form offers them.
var AbuseReasons = []string{AbusePhishing, AbuseMalware, AbuseSpam, AbuseIllegal, AbuseOther}

// The states of an abuse report: open until the instance admin acts on
// it (resolved: the link or its destination was dealt with) or dismisses
// it.
const (
	ReportOpen      = "open"
	ReportResolved  = "resolved"
	ReportDismissed = "dismissed"
)

// Bounds of a report's free text.
const (
	MaxReportDetails = 1000
	MaxReportContact = 254
)

// AbuseReport is a visitor's report of a short link to the instance
// admin. Reports of one link for one reason that are still open are one
// report, counted (Count) rather than stored again, so a flood of reports
// takes no room. Domain, Alias and Destination are the link's when it was
// first reported: they stay when the link changes or goes.
type AbuseReport struct {
	ID          string
	WorkspaceID string
	LinkID      string
	Domain      string
	Alias       string
	Destination string
	Reason      string
	// Details and Contact are the last reporter's, if they gave them.
	Details string
	Contact string
	Count   int64
	Status  string
	// CreatedAt is the first report's time, UpdatedAt the last report's
	// or the last change of status.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Normalize trims the reporter's input.
func (r *AbuseReport) Normalize() {
	r.Reason = strings.ToLower(strings.TrimSpace(r.Reason))
	r.Details = strings.TrimSpace(r.Details)
	r.Contact = strings.TrimSpace(r.Contact)
}

// Validate checks what a reporter sent.
func (r *AbuseReport) Validate() error {
	var v validation
	if !validReason(r.Reason) {
		v.add("reason", "must be one of %s", strings.Join(AbuseReasons, ", "))
	}
	if utf8.RuneCountInString(r.Details) > MaxReportDetails {
		v.add("details", "must be at most %d characters", MaxReportDetails)
	} else if msg := checkText(strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(r.Details)); msg != "" {
		v.add("details", "%s", msg)
	}
	if r.Contact != "" {
		if len(r.Contact) > MaxReportContact {
			v.add("contact", "must be at most %d characters", MaxReportContact)
		} else if a, err := mail.ParseAddress(r.Contact); err != nil || a.Address != r.Contact {
			v.add("contact", "must be an e-mail address, or empty")
		}
	}
	return v.err()
}

func validReason(s string) bool {
	for _, r := range AbuseReasons {
		if s == r {
			return true
		}
	}
	return false
}

// ValidReportStatus reports whether s is a state of a report.
func ValidReportStatus(s string) bool {
	return s == ReportOpen || s == ReportResolved || s == ReportDismissed
}

// MaxReportsListed bounds one answer of FindAbuseReports.
const MaxReportsListed = 200

// MaxOpenReports bounds the open reports of an instance: past it, a
// report of a link and reason not reported yet is refused (ErrTooManyReports)
// until the admin deals with some; more reports of those reported are
// still counted.
const MaxOpenReports = 10000

// ErrTooManyReports refuses a report past MaxOpenReports.
var ErrTooManyReports = Errorf(ERATELIMITED, "this instance has %d open abuse reports waiting for its admin; try again later", MaxOpenReports)

// AbuseReportService keeps the instance's abuse reports.
type AbuseReportService interface {
	// ReportAbuse records a report of a link: a new open report, or one
	// more of the open report of the same link and reason (Count, and the
	// new Details and Contact when given). It sets r's fields as stored.
	ReportAbuse(ctx context.Context, r *AbuseReport) error
	// FindAbuseReports returns reports newest first (by their last
	// report), of status when it is not "", at most limit, those updated
	// before before when it is not zero.
	FindAbuseReports(ctx context.Context, status string, before time.Time, limit int) ([]*AbuseReport, error)
	// SetAbuseReportStatus changes a report's status. ENOTFOUND. An
	// open report of the same link and reason may exist already when one
	// is reopened: ECONFLICT.
	SetAbuseReportStatus(ctx context.Context, id, status string) (*AbuseReport, error)
}
