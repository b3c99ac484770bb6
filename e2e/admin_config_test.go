package e2e

import (
	"strings"
	"testing"
)

// TestAdminConfigIgnoredSaysSo starts twice on one data file with the
// admin in the configuration, the second time with another password: the
// first start creates the admin, the second says in its log that the
// admin settings are ignored, and the first password still holds.
func TestAdminConfigIgnoredSaysSo(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	first := &syncWriter{}
	_, stop := startApp(t, cfg, first)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.String(), "created the instance admin") {
		t.Fatalf("first start: %s", first.String())
	}
	cfg.Admin.Password = "another long password"
	second := &syncWriter{}
	base, _ := startApp(t, cfg, second)
	if !strings.Contains(second.String(), "admin.email and admin.password are ignored") {
		t.Fatalf("second start does not say the admin settings are ignored:\n%s", second.String())
	}
	c := client{t, base}
	c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"another long password"}`, 401)
}
