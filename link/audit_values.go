package link

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// AuditChanges returns the changes named by triples of field, before and
// after (nil for "none"; see AuditValue), as stores keep them: fields
// whose values are equal are left out, and nil is returned when none
// differ.
func AuditChanges(fieldBeforeAfter ...any) map[string][2]*string {
	out := map[string][2]*string{}
	for i := 0; i+2 < len(fieldBeforeAfter); i += 3 {
		f, _ := fieldBeforeAfter[i].(string)
		before, after := AuditValue(fieldBeforeAfter[i+1]), AuditValue(fieldBeforeAfter[i+2])
		if before == nil && after == nil || before != nil && after != nil && *before == *after {
			continue
		}
		out[f] = [2]*string{before, after}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// AuditValue is a value as the audit log keeps it: text, a list
// comma-separated; nil, "" and an empty list are nil.
func AuditValue(v any) *string {
	var s string
	switch v := v.(type) {
	case nil:
		return nil
	case *string:
		if v == nil {
			return nil
		}
		s = *v
	case string:
		s = v
	case []string:
		s = strings.Join(v, ",")
	default:
		s = fmt.Sprint(v)
	}
	if s == "" {
		return nil
	}
	return &s
}

// AuditTime is a time as an audit value: RFC 3339 in UTC, nil for none.
func AuditTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// AuditURLHost is what the audit log keeps of a URL: its scheme and host
// ("https://hooks.example.com"), never its path or query, which may hold
// secrets; "" for a URL without a host.
func AuditURLHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Hostname()
}

// AuditChangeRecords returns changes as stores keep them.
func AuditChangeRecords(changes map[string]Change) map[string][2]*string {
	if len(changes) == 0 {
		return nil
	}
	ch := make(map[string][2]*string, len(changes))
	for f, c := range changes {
		ch[f] = [2]*string{c.Before, c.After}
	}
	return ch
}

// AuditRecord is one audit entry a change makes: its action and the
// changed fields as stores keep them.
type AuditRecord struct {
	Action  string
	Changes map[string][2]*string
}

// UserUpdateAudit returns the entries an account update records, in
// order: user.renamed, user.password_changed (never a hash), user.disabled
// or user.enabled, and auth.logout_all when tokens were ended for nothing
// else; none for what did not change. before and after are the user's
// name and disabled flag around the update.
func UserUpdateAudit(beforeName, afterName string, beforeDisabled, afterDisabled bool, upd UserUpdate) []AuditRecord {
	var es []AuditRecord
	if afterName != beforeName {
		es = append(es, AuditRecord{AuditUserRenamed, AuditChanges("name", beforeName, afterName)})
	}
	if upd.PasswordHash != nil {
		es = append(es, AuditRecord{AuditPasswordChanged, nil})
	}
	if afterDisabled != beforeDisabled {
		action := AuditUserEnabled
		if afterDisabled {
			action = AuditUserDisabled
		}
		es = append(es, AuditRecord{action, AuditChanges("disabled", fmt.Sprint(beforeDisabled), fmt.Sprint(afterDisabled))})
	}
	if upd.EndTokens && upd.PasswordHash == nil && upd.Disabled == nil {
		es = append(es, AuditRecord{AuditLogoutAll, nil})
	}
	return es
}
