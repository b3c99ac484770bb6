package auth

import (
	"strings"
	"testing"
	"time"
)

func TestDeviceCookies(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	d, err := NewDeviceCookies([]byte(strings.Repeat("s", 32)), clock)
	if err != nil {
		t.Fatal(err)
	}
	value, expires := d.Issue("usr_1")
	if got, want := expires, now.Add(DeviceTTL); !got.Equal(want) {
		t.Fatalf("expires %v, want %v", got, want)
	}
	if !d.Known(value, "usr_1") {
		t.Fatal("a fresh cookie is not known")
	}
	if d.Known(value, "usr_2") {
		t.Fatal("usr_1's cookie names usr_2's device")
	}
	other, _ := NewDeviceCookies([]byte(strings.Repeat("t", 32)), clock)
	if other.Known(value, "usr_1") {
		t.Fatal("a cookie outlived its JWT secret")
	}
	forged, _ := other.Issue("usr_1")
	for _, bad := range []string{"", ".", "..", value + "x", strings.Replace(value, ".", ",", 1), forged,
		value[:len(value)-2], "dXNyXzE.99999999999." + value[strings.LastIndexByte(value, '.')+1:]} {
		if d.Known(bad, "usr_1") {
			t.Errorf("%q is known", bad)
		}
	}
	now = now.Add(DeviceTTL - time.Second)
	if !d.Known(value, "usr_1") {
		t.Fatal("a cookie ended before DeviceTTL")
	}
	now = now.Add(time.Second)
	if d.Known(value, "usr_1") {
		t.Fatal("a cookie outlived DeviceTTL")
	}
}

func TestDeviceCookiesNeedASecret(t *testing.T) {
	if _, err := NewDeviceCookies(nil, nil); err == nil {
		t.Fatal("no error for an empty secret")
	}
}
