package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var utmTests = []test{
	{"CreateFindUpdateDelete", testUTMTemplates},
	{"Bounds", testUTMTemplateBounds},
	{"CaseFolding", testUTMTemplateCaseFolding},
}

// testUTMTemplateCaseFolding: every store folds names as
// link.SameTemplateName does, outside ASCII too, whatever the database's
// collation: two names clash if and only if they fold the same.
func testUTMTemplateCaseFolding(t *testing.T, e *env) {
	_, ws := e.setup()
	for _, c := range []struct {
		a, b  string
		clash bool
	}{
		{"Café", "CAFÉ", true},
		{"Ǆ-promo", "ǆ-promo", true},
		{"ǅ-sale", "Ǆ-SALE", true},
		{"Ωmega", "ωmega", true},
		{"Kelvin", "\u212aelvin", true}, // the Kelvin sign folds to k
		{"Straße", "STRASSE", false},    // simple folding: ß is not ss
		{"İstanbul", "istanbul", false}, // dotted capital I folds to nothing else
		{"ıd", "Id", false},             // nor does the dotless small i
	} {
		a := &link.UTMTemplate{WorkspaceID: ws.ID, Name: c.a, UTMSource: "a"}
		if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, a); err != nil {
			t.Fatalf("%q: %v", c.a, err)
		}
		if got := link.SameTemplateName(c.a, c.b); got != c.clash {
			t.Fatalf("SameTemplateName(%q, %q) = %v", c.a, c.b, got)
		}
		b := &link.UTMTemplate{WorkspaceID: ws.ID, Name: c.b, UTMSource: "b"}
		err := e.UTMTemplates.CreateUTMTemplate(e.ctx, b)
		if c.clash {
			wantCode(t, err, link.ECONFLICT)
			// A rename to it clashes the same way.
			o := &link.UTMTemplate{WorkspaceID: ws.ID, Name: "other " + c.a, UTMSource: "o"}
			if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, o); err != nil {
				t.Fatal(err)
			}
			_, err = e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, o.ID, link.UTMTemplateUpdate{Name: ptr(c.b)})
			wantCode(t, err, link.ECONFLICT)
			// And the template itself may take it.
			if u, err := e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, a.ID, link.UTMTemplateUpdate{Name: ptr(c.b)}); err != nil || u.Name != c.b {
				t.Fatalf("renamed %q to %q: %+v, %v", c.a, c.b, u, err)
			}
		} else if err != nil {
			t.Fatalf("%q next to %q: %v", c.b, c.a, err)
		}
	}
}

func testUTMTemplates(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	news := &link.UTMTemplate{WorkspaceID: ws.ID, Name: "Newsletter", UTMSource: "newsletter", UTMMedium: "email"}
	if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, news); err != nil {
		t.Fatal(err)
	}
	if news.ID == "" || !news.CreatedAt.Equal(e.clock.Now()) || !news.UpdatedAt.Equal(news.CreatedAt) {
		t.Fatalf("CreateUTMTemplate set %+v", news)
	}
	e.clock.Add(time.Minute)
	ads := &link.UTMTemplate{WorkspaceID: ws.ID, Name: "ads", UTMSource: "google", UTMMedium: "cpc", UTMCampaign: "spring"}
	if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, ads); err != nil {
		t.Fatal(err)
	}
	// Names are unique in a workspace whatever the case, not across them.
	dup := &link.UTMTemplate{WorkspaceID: ws.ID, Name: "NEWSLETTER", UTMSource: "x"}
	err := e.UTMTemplates.CreateUTMTemplate(e.ctx, dup)
	wantCode(t, err, link.ECONFLICT)
	if f := link.ErrorFields(err); len(f) != 1 || f[0].Field != "name" {
		t.Fatalf("a taken name: fields %v", f)
	}
	theirs := &link.UTMTemplate{WorkspaceID: other.ID, Name: "Newsletter", UTMSource: "theirs"}
	if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, theirs); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.UTMTemplates.CreateUTMTemplate(e.ctx, &link.UTMTemplate{WorkspaceID: "ws_unknown", Name: "x", UTMSource: "x"}), link.ENOTFOUND)

	got, err := e.UTMTemplates.FindUTMTemplateByID(e.ctx, ws.ID, news.ID)
	if err != nil || *got != *news {
		t.Fatalf("FindUTMTemplateByID = %+v, %v; want %+v", got, err, news)
	}
	_, err = e.UTMTemplates.FindUTMTemplateByID(e.ctx, other.ID, news.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.UTMTemplates.FindUTMTemplateByID(e.ctx, ws.ID, "utm_unknown")
	wantCode(t, err, link.ENOTFOUND)
	// By name, whatever the case.
	if all, err := e.UTMTemplates.FindUTMTemplates(e.ctx, ws.ID); err != nil || len(all) != 2 || all[0].ID != ads.ID || all[1].ID != news.ID {
		t.Fatalf("FindUTMTemplates = %+v, %v; want ads, Newsletter", all, err)
	}

	e.clock.Add(time.Minute)
	upd, err := e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, news.ID, link.UTMTemplateUpdate{Name: ptr(" Weekly "), UTMCampaign: ptr("weekly")})
	if err != nil || upd.Name != "Weekly" || upd.UTMCampaign != "weekly" || upd.UTMSource != "newsletter" ||
		!upd.UpdatedAt.Equal(e.clock.Now()) || !upd.CreatedAt.Equal(news.CreatedAt) {
		t.Fatalf("UpdateUTMTemplate = %+v, %v", upd, err)
	}
	if got, _ := e.UTMTemplates.FindUTMTemplateByID(e.ctx, ws.ID, news.ID); *got != *upd {
		t.Fatalf("after the update: %+v, want %+v", got, upd)
	}
	_, err = e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, news.ID, link.UTMTemplateUpdate{Name: ptr("ADS")})
	wantCode(t, err, link.ECONFLICT)
	// Its own name in another case is not a clash.
	if u, err := e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, news.ID, link.UTMTemplateUpdate{Name: ptr("weekly")}); err != nil || u.Name != "weekly" {
		t.Fatalf("renamed to its own name's case: %+v, %v", u, err)
	}
	_, err = e.UTMTemplates.UpdateUTMTemplate(e.ctx, ws.ID, news.ID, link.UTMTemplateUpdate{UTMSource: ptr(""), UTMMedium: ptr(""), UTMCampaign: ptr("")})
	wantCode(t, err, link.EINVALID)
	_, err = e.UTMTemplates.UpdateUTMTemplate(e.ctx, other.ID, news.ID, link.UTMTemplateUpdate{Name: ptr("mine")})
	wantCode(t, err, link.ENOTFOUND)

	wantCode(t, e.UTMTemplates.DeleteUTMTemplate(e.ctx, other.ID, news.ID), link.ENOTFOUND)
	if err := e.UTMTemplates.DeleteUTMTemplate(e.ctx, ws.ID, news.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.UTMTemplates.DeleteUTMTemplate(e.ctx, ws.ID, news.ID), link.ENOTFOUND)
	if all, _ := e.UTMTemplates.FindUTMTemplates(e.ctx, ws.ID); len(all) != 1 || all[0].ID != ads.ID {
		t.Fatalf("after the deletion: %+v", all)
	}
	// Its name is free again.
	if err := e.UTMTemplates.CreateUTMTemplate(e.ctx, &link.UTMTemplate{WorkspaceID: ws.ID, Name: "newsletter", UTMSource: "n"}); err != nil {
		t.Fatal(err)
	}
}

// testUTMTemplateBounds: a workspace has at most link.MaxUTMTemplates,
// also when many are created at once, and two creations of one name at
// once make one template.
func testUTMTemplateBounds(t *testing.T, e *env) {
	admin, ws := e.setup()
	var wg sync.WaitGroup
	errs := make([]error, link.MaxUTMTemplates+10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.UTMTemplates.CreateUTMTemplate(e.ctx, &link.UTMTemplate{WorkspaceID: ws.ID, Name: fmt.Sprint("t", i), UTMSource: "s"})
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		if err == nil {
			made++
		} else if link.ErrorCode(err) != link.ECONFLICT {
			t.Fatal(err)
		}
	}
	if all, _ := e.UTMTemplates.FindUTMTemplates(e.ctx, ws.ID); made != link.MaxUTMTemplates || len(all) != made {
		t.Fatalf("%d created, %d listed; want %d", made, len(all), link.MaxUTMTemplates)
	}

	ws2 := e.workspace("Second", admin)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = e.UTMTemplates.CreateUTMTemplate(e.ctx, &link.UTMTemplate{WorkspaceID: ws2.ID, Name: "Same", UTMSource: "s"})
		}()
	}
	wg.Wait()
	if all, _ := e.UTMTemplates.FindUTMTemplates(e.ctx, ws2.ID); len(all) != 1 {
		t.Fatalf("two creations of one name made %d templates", len(all))
	}
}
