package link

import (
	"errors"
	"fmt"
)

// Error codes shared by every package. The server maps each to one HTTP status
// in a single table; nothing else decides what a client sees.
const (
	EINVALIDREQUEST = "invalid_request"   // malformed input: bad JSON, bad query parameter
	EUNAUTHORIZED   = "unauthorized"      // no credential or a credential that does not authenticate
	EFORBIDDEN      = "forbidden"         // the credential's scope or role does not allow the action
	ENOTFOUND       = "not_found"         // no such object (in this workspace)
	ECONFLICT       = "conflict"          // a unique name is taken, or the action clashes with state
	EINVALID        = "validation_failed" // well-formed input that breaks a rule
	ERATELIMITED    = "rate_limited"      // too many requests
	EGONE           = "gone"              // a one-time thing used up, revoked or expired (an invitation)
	EINTERNAL       = "internal"          // anything else; never shown to a client
)

// FieldError names one field of the input and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// Error is a domain error: a stable code and a message a person can act on.
// Fields lists per-field problems for validation errors.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("linkbolt error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and EINTERNAL for any other error.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic text for internal errors so their detail never reaches a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// ErrorFields returns the per-field problems of err, if any.
func ErrorFields(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

// validation collects field errors and turns them into one EINVALID error.
type validation struct{ fields []FieldError }

func (v *validation) add(field, format string, args ...any) {
	v.fields = append(v.fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validation) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	msg := v.fields[0].Field + ": " + v.fields[0].Message
	if len(v.fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(v.fields)-1)
	}
	return &Error{Code: EINVALID, Message: msg, Fields: v.fields}
}

// CampaignHasLinksError is the ECONFLICT error of a deletion of campaign
// id that still has n links and was not asked to detach them.
func CampaignHasLinksError(id string, n int) *Error {
	return Errorf(ECONFLICT, "campaign %q still has %s: move or delete %s, or delete with ?detach=true", id, linkCount(n), themFor(n))
}

// DomainHasLinksError is the ECONFLICT error of a deletion of the domain
// hostname while n links still use it.
func DomainHasLinksError(hostname string, n int) *Error {
	return Errorf(ECONFLICT, "the domain %s still has %s: delete %s (or re-create %[3]s on another domain) first", hostname, linkCount(n), themFor(n))
}

// linkCount says how many links n is, in words: "1 link", "2 links".
func linkCount(n int) string {
	if n == 1 {
		return "1 link"
	}
	return fmt.Sprintf("%d links", n)
}

// themFor is the pronoun of n links: "it" for one, "them" otherwise.
func themFor(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
