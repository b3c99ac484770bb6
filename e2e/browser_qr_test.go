package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// changeTo sets an input's or a select's value and fires the change event
// the QR dialog listens to (as leaving a field or picking a colour does).
func changeTo(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value), nil)
}

// facts waits until the preview's caption (size, format, bytes) holds s.
func facts(s string) chromedp.Action {
	return chromedp.WaitVisible(fmt.Sprintf(`//figcaption[@id="qr-facts" and contains(., %q)]`, s), chromedp.BySearch)
}

// TestBrowserQR opens the QR dialog of a link from the Links page,
// changes the options and sees the preview follow them (an option the API
// refuses shows its message at the field), downloads PNG and SVG, saves
// the options as a design, applies it, deletes it, and closes the dialog
// with Escape, the focus back on the row's QR button.
func TestBrowserQR(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/spring","alias":"spring"}`, 201)
	id := l["id"].(string)

	b := newBrowser(t, base)
	signIn(b, base)
	row := `#links tr[data-alias="spring"]`
	b.run("open the dialog",
		chromedp.WaitVisible(row),
		chromedp.Click(row+` button.qr-open`),
		chromedp.WaitVisible(`dialog.qr-dialog[open] #qr-preview`),
		facts("512 × 512 px · PNG"),
		chromedp.WaitVisible(`dialog.qr-dialog .empty`)) // no designs yet
	var natural int
	b.run("natural size", chromedp.Evaluate(`document.querySelector('#qr-preview').naturalWidth`, &natural))
	if natural != 512 {
		t.Fatalf("default preview is %d px wide, want 512", natural)
	}

	// A size too small for the code is refused at the field.
	b.run("too small",
		changeTo("#qr-size", "10"),
		chromedp.WaitVisible(`#qr-size-error`),
		chromedp.WaitVisible(`dialog.qr-dialog .msg.error`))
	// A smaller image and a yellow background: the preview follows.
	pixel := `(() => { const i = document.querySelector('#qr-preview'); const c = document.createElement('canvas');
		c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
		return Array.from(g.getImageData(1, 1, 1, 1).data.slice(0, 3)).join(','); })()`
	var before, after string
	b.run("size 256",
		changeTo("#qr-size", "256"),
		facts("256 × 256 px · PNG"),
		chromedp.WaitNotPresent(`#qr-size-error`),
		chromedp.Evaluate(`document.querySelector('#qr-preview').naturalWidth`, &natural),
		chromedp.Evaluate(pixel, &before))
	if natural != 256 || before != "255,255,255" {
		t.Fatalf("preview after size 256: %d px wide, corner %s", natural, before)
	}
	var bytesBefore string
	b.run("bytes", chromedp.AttributeValue(`#qr-preview`, "data-bytes", &bytesBefore, nil))
	b.run("yellow background",
		changeTo("#qr-bg", "#fff59d"),
		changeTo("#qr-level", "H"),
		chromedp.WaitNotPresent(fmt.Sprintf(`#qr-preview[data-bytes="%s"]`, bytesBefore)),
		facts("256 × 256 px · PNG"),
		chromedp.Poll(pixel+` === '255,245,157'`, nil),
		chromedp.Evaluate(pixel, &after))
	if after != "255,245,157" {
		t.Fatalf("the preview's corner is %s after the background changed", after)
	}
	var curl string
	b.run("the image as curl",
		chromedp.Click(`.qr-downloads details.curl summary`),
		chromedp.Text(`.qr-downloads details.curl pre`, &curl))
	if !strings.Contains(curl, base+"/v1/links/"+id+"/qr?") || !strings.Contains(curl, "size=256") || !strings.Contains(curl, "bg=%23fff59d") || !strings.Contains(curl, "$LINKBOLT_KEY") {
		t.Fatalf("copy as curl of the image: %s", curl)
	}

	// Downloads: the bytes of the options shown, named after the alias.
	dir := t.TempDir()
	done := make(chan string, 1)
	var mu sync.Mutex
	names := map[string]string{} // download GUID → the file name the page gave
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if e, ok := ev.(*cdpbrowser.EventDownloadWillBegin); ok {
			mu.Lock()
			names[e.GUID] = e.SuggestedFilename
			mu.Unlock()
		}
		if e, ok := ev.(*cdpbrowser.EventDownloadProgress); ok && e.State == cdpbrowser.DownloadProgressStateCompleted {
			select {
			case done <- e.GUID:
			default:
			}
		}
	})
	b.allowDownloads(dir)
	for _, f := range []string{"png", "svg"} {
		b.run("download "+f,
			chromedp.Click(`#qr-download-`+f),
			chromedp.WaitVisible(fmt.Sprintf(`//p[@role="status" and text()="Saved spring-qr.%s."]`, f), chromedp.BySearch))
		var guid string
		select {
		case guid = <-done:
		case <-b.ctx.Done():
			t.Fatalf("the %s download did not complete", f)
		}
		mu.Lock()
		name := names[guid]
		mu.Unlock()
		if name != "spring-qr."+f {
			t.Errorf("the %s download is named %q", f, name)
		}
		data, err := os.ReadFile(filepath.Join(dir, guid))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("the PNG download: %v", err)
			}
			r, g, bl, _ := img.At(0, 0).RGBA()
			if img.Bounds().Dx() != 256 || r>>8 != 0xff || g>>8 != 0xf5 || bl>>8 != 0x9d {
				t.Fatalf("the PNG download is %v with corner %x %x %x", img.Bounds(), r>>8, g>>8, bl>>8)
			}
		case "svg":
			if !strings.Contains(string(data[:min(200, len(data))]), `<svg xmlns="http://www.w3.org/2000/svg" width="256"`) || !strings.Contains(string(data), `fill="#fff59d"`) {
				t.Fatalf("the SVG download starts %q", data[:min(200, len(data))])
			}
		}
	}

	// Saving: a name is needed; then the design is the options shown.
	b.run("SVG preview",
		changeTo("#qr-format", "svg"),
		facts("SVG"))
	b.run("save without a name",
		chromedp.Click(`#qr-save button[type=submit]`),
		chromedp.WaitVisible(`#qr-design-name-error`))
	b.run("the save as curl",
		chromedp.SendKeys("#qr-design-name", "Spring poster"),
		chromedp.Click(`#qr-save details.curl summary`),
		chromedp.Text(`#qr-save details.curl pre`, &curl))
	if !strings.Contains(curl, base+"/v1/qr-codes") || !strings.Contains(curl, `"name":"Spring poster"`) || !strings.Contains(curl, `"size":256`) || strings.Contains(curl, tok) {
		t.Fatalf("copy as curl of the save: %s", curl)
	}
	b.run("save",
		chromedp.Click(`#qr-save button[type=submit]`),
		chromedp.WaitVisible(`#qr-designs li`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Saved the design")]`, chromedp.BySearch))
	list := c.must("GET", "/v1/qr-codes?link_id="+url.QueryEscape(id), tok, "", 200)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d designs after the save", len(list))
	}
	d := list[0].(map[string]any)
	opts := fmt.Sprint(d["options"])
	if d["name"] != "Spring poster" || opts != "map[bg:#fff59d fg:#000000 format:svg level:H margin:4 size:256]" {
		t.Fatalf("the saved design: %v", d)
	}
	// The screenshot shows the dialog from its top, the commands folded.
	b.run("tidy for the screenshot", chromedp.Evaluate(`document.querySelectorAll('dialog.qr-dialog details').forEach(d => d.open = false); document.querySelector('dialog.qr-dialog').scrollTop = 0`, nil))
	b.screenshot("qr")

	// Back to the defaults, then the design applied again.
	b.run("reset",
		chromedp.Click(`#qr-reset`),
		facts("512 × 512 px · PNG"))
	var size, level string
	b.run("apply",
		chromedp.Click(`#qr-designs li button.qr-apply`),
		facts("256 × 256 px · SVG"),
		chromedp.WaitVisible(`#qr-designs .qr-applied`),
		chromedp.Value(`#qr-size`, &size),
		chromedp.Value(`#qr-level`, &level))
	if size != "256" || level != "H" {
		t.Fatalf("after apply: size %q, level %q", size, level)
	}

	// Update: the design takes the options shown, its name kept.
	b.run("update",
		changeTo("#qr-margin", "2"),
		facts("256 × 256 px · SVG"),
		chromedp.WaitNotPresent(`#qr-designs .qr-applied`),
		chromedp.Click(`#qr-designs li button.qr-update`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Updated the design")]`, chromedp.BySearch),
		chromedp.WaitVisible(`#qr-designs .qr-applied`))
	d = c.must("GET", "/v1/qr-codes/"+d["id"].(string), tok, "", 200)
	if d["name"] != "Spring poster" || fmt.Sprint(d["options"]) != "map[bg:#fff59d fg:#000000 format:svg level:H margin:2 size:256]" {
		t.Fatalf("the updated design: %v", d)
	}

	b.run("delete the design",
		chromedp.Click(`#qr-designs li button.danger`),
		chromedp.Click(`#qr-designs li .confirm button.danger`),
		chromedp.WaitVisible(`dialog.qr-dialog .empty`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Deleted the design")]`, chromedp.BySearch))
	if n := len(c.must("GET", "/v1/qr-codes", tok, "", 200)["data"].([]any)); n != 0 {
		t.Fatalf("%d designs after the delete", n)
	}

	// Escape closes the dialog and the focus is back on the QR button.
	var back bool
	b.run("escape",
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitNotPresent(`dialog.qr-dialog`),
		chromedp.Evaluate(`document.activeElement.matches('#links tr[data-alias="spring"] button.qr-open')`, &back))
	if !back {
		t.Fatal("the focus is not back on the QR button after Escape")
	}
	// The Close button does the same.
	b.run("close",
		chromedp.Click(row+` button.qr-open`),
		chromedp.WaitVisible(`dialog.qr-dialog[open] #qr-preview`),
		chromedp.Click(`#qr-close`),
		chromedp.WaitNotPresent(`dialog.qr-dialog`),
		chromedp.Evaluate(`document.activeElement.matches('#links tr[data-alias="spring"] button.qr-open')`, &back))
	if !back {
		t.Fatal("the focus is not back on the QR button after Close")
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/links/{id}/qr", "GET /v1/qr-codes", "POST /v1/qr-codes", "PATCH /v1/qr-codes/{id}", "DELETE /v1/qr-codes/{id}"} {
		if !got[w] {
			t.Errorf("the QR journey did not call %s", w)
		}
	}
}

// TestBrowserQRLogo adds a logo to a saved design from the QR dialog: a
// file that is not a PNG or JPEG is refused before it is sent, one the
// server cannot read shows the server's message, a PNG becomes the
// design's logo (shown, and drawn in the centre of the design's image),
// and Remove logo takes it away.
func TestBrowserQRLogo(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/brand","alias":"brand"}`, 201)
	id := l["id"].(string)
	d := c.must("POST", "/v1/qr-codes", tok, `{"link_id":"`+id+`","name":"Brand poster","options":{"size":256}}`, 201)
	qid := d["id"].(string)

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logo := image.NewNRGBA(image.Rect(0, 0, 120, 120))
	for y := 0; y < 120; y++ {
		for x := 0; x < 120; x++ {
			if (x-60)*(x-60)+(y-60)*(y-60) < 58*58 {
				logo.SetNRGBA(x, y, color.NRGBA{R: 0xdc, G: 0x14, B: 0x3c, A: 0xff})
			}
		}
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, logo); err != nil {
		t.Fatal(err)
	}
	goodPNG := write("brand.png", pngData.Bytes())
	svgFile := write("brand.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
	fakePNG := write("fake.png", []byte("this is not an image"))

	b := newBrowser(t, base)
	signIn(b, base)
	row := `#links tr[data-alias="brand"]`
	item := `#qr-designs li[data-design="` + qid + `"]`
	b.run("open the dialog",
		chromedp.WaitVisible(row),
		chromedp.Click(row+` button.qr-open`),
		chromedp.WaitVisible(item+` .qr-logo-pick`),
		chromedp.WaitVisible(item+` .qr-thumb img`))
	var label string
	b.run("no logo yet", chromedp.Text(item+` .qr-logo-pick`, &label))
	if label != "Add a logo" {
		t.Fatalf("the logo control says %q", label)
	}

	b.run("an SVG is refused here",
		chromedp.SetUploadFiles(item+` input.qr-logo-file`, []string{svgFile}),
		chromedp.WaitVisible(`//dialog//p[contains(@class, "error") and contains(., "SVG logos are not accepted")]`, chromedp.BySearch))
	b.run("a file that is no image is refused by the server",
		chromedp.SetUploadFiles(item+` input.qr-logo-file`, []string{fakePNG}),
		chromedp.WaitVisible(`//dialog//p[contains(@class, "error") and contains(., "not a PNG or JPEG image")]`, chromedp.BySearch))
	if got := c.must("GET", "/v1/qr-codes/"+qid, tok, "", 200); got["logo"] != nil {
		t.Fatalf("a refused file became the logo: %v", got)
	}

	// The centre pixel of the design's thumbnail: the logo's crimson once
	// it has one.
	centre := `(() => { const i = document.querySelector('` + item + ` .qr-thumb img'); if (!i || !i.complete || !i.naturalWidth) return '';
		const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight; const g = c.getContext('2d'); g.drawImage(i, 0, 0);
		return Array.from(g.getImageData(c.width / 2, c.height / 2, 1, 1).data.slice(0, 3)).join(','); })()`
	b.run("add the logo",
		chromedp.SetUploadFiles(item+` input.qr-logo-file`, []string{goodPNG}),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Added the logo")]`, chromedp.BySearch),
		chromedp.WaitVisible(item+` img.qr-logo-preview`),
		chromedp.WaitVisible(item+` button.qr-logo-remove`),
		chromedp.Poll(centre+` === '220,20,60'`, nil))
	b.run("the level shown", chromedp.Text(item+` .hint`, &label))
	if !strings.Contains(label, "level H (logo)") {
		t.Fatalf("the design's summary: %q", label)
	}
	got := c.must("GET", "/v1/qr-codes/"+qid, tok, "", 200)
	lg, _ := got["logo"].(map[string]any)
	if lg == nil || len(fmt.Sprint(lg["digest"])) != 64 {
		t.Fatalf("the design after the upload: %v", got)
	}
	// Applied, the design is previewed with its logo: its own image.
	preview := strings.Replace(centre, item+` .qr-thumb img`, `#qr-preview`, 1)
	b.run("apply the design with its logo",
		chromedp.Click(item+` button.qr-apply`),
		facts("with the logo of “Brand poster”"),
		facts("256 × 256 px · PNG"),
		chromedp.WaitVisible(`#qr-level-hint`),
		chromedp.Poll(preview+` === '220,20,60'`, nil))
	b.run("tidy for the screenshot", chromedp.Evaluate(`document.querySelectorAll('dialog.qr-dialog details').forEach(d => d.open = false)`, nil))
	b.screenshot("qr-logo", chromedp.Evaluate(`document.querySelector('`+item+`').scrollIntoView({block: 'end'})`, nil))

	b.run("remove the logo",
		chromedp.Click(item+` button.qr-logo-remove`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Removed the logo")]`, chromedp.BySearch),
		chromedp.WaitNotPresent(item+` img.qr-logo-preview`),
		chromedp.WaitNotPresent(item+` button.qr-logo-remove`),
		chromedp.Poll(centre+` !== '220,20,60' && `+centre+` !== ''`, nil),
		chromedp.WaitNotPresent(`//figcaption[@id="qr-facts" and contains(., "with the logo")]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`#qr-level-hint`),
		facts("256 × 256 px · PNG"),
		chromedp.Poll(preview+` !== '220,20,60' && `+preview+` !== ''`, nil))
	if got := c.must("GET", "/v1/qr-codes/"+qid, tok, "", 200); got["logo"] != nil {
		t.Fatalf("the design after removing its logo: %v", got)
	}

	ops := b.templates(t)
	for _, w := range []string{"PUT /v1/qr-codes/{id}/logo", "GET /v1/qr-codes/{id}/logo", "DELETE /v1/qr-codes/{id}/logo", "GET /v1/qr-codes/{id}/image"} {
		if !ops[w] {
			t.Errorf("the logo journey did not call %s", w)
		}
	}
}
