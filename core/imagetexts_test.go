package core

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/imageinput"
	"github.com/codexd/codexd/imageinput/imagetest"
)

// Codex 0.169's fixed texts for an image the model cannot be sent, word for
// word (they are what the model was trained to read; TestRequestDifferential
// compares them side by side with Codex's requests).
const (
	codexImageUnusable  = "image content omitted because it could not be processed"
	codexImageTooLarge  = "image content omitted because it exceeded the supported size limit; use a smaller image"
	codexImageLowDetail = "image content omitted because detail 'low' is not supported; use 'high', 'original', or 'auto'"
	codexImageRemote    = "image content omitted because remote image URLs are not supported"
	codexViewImageBad   = "unable to process image: invalid or unsupported image data"
)

// TestImageTextsAreCodexs: what replaces an image is Codex's text, in
// place of the image between its tags. An image whose pixels are past the
// decoding budget is one that could not be processed (Codex, side by side:
// a 60000×60000 header is "could not be processed"); only bytes past the
// input limit are "exceeded the supported size limit"; detail "low" and a
// remote URL have their own.
func TestImageTextsAreCodexs(t *testing.T) {
	huge := imagetest.PNGHeader(60000, 60000)
	p := imagePrep{read: func(path string) ([]byte, error) {
		switch filepath.Base(path) {
		case "huge.png":
			return huge, nil
		case "small.png":
			return testPNG(t, 3, 2), nil
		}
		return nil, errImageFileTooLarge(imageinput.MaxInputBytes + 1)
	}}
	local := func(path, detail string) string {
		parts := p.localImageParts(agent.Input{Type: "localImage", Path: path, Detail: detail}, 1)
		var out []string
		for _, c := range parts {
			out = append(out, partShape(t, c))
		}
		return strings.Join(out, " | ")
	}
	for _, c := range []struct{ path, detail, want string }{
		{"/w/huge.png", "", codexImageUnusable},
		{"/w/big.png", "", codexImageTooLarge},
		{"/w/small.png", "low", codexImageLowDetail},
	} {
		want := `input_text <image name=[Image #1] path="` + c.path + `"> | input_text ` + c.want + " | input_text </image>"
		if got := local(c.path, c.detail); got != want {
			t.Errorf("%s (detail %q):\n%s\nwant\n%s", c.path, c.detail, got, want)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"https://example.com/a.png", codexImageRemote},
		{"data:image/png;base64," + base64.StdEncoding.EncodeToString(huge), codexImageUnusable},
		{"data:text/plain;base64,aGVsbG8=", codexImageUnusable},
		{"data:image/png;base64," + strings.Repeat("A", imageinput.MaxInputBytes/3*4+8), codexImageTooLarge},
	} {
		if got := partShape(t, p.imageURLPart(agent.Input{Type: "image", URL: c.url})); got != "input_text "+c.want {
			t.Errorf("%.40s: %s, want %s", c.url, got, c.want)
		}
	}
}

// TestViewImageTooLargeIsCodexs: view_image of an image past the decoding
// budget answers as Codex 0.169 does for it (side by side: a 60000×60000
// header, and a whole 12000×12000 PNG): the image data is invalid or
// unsupported.
func TestViewImageTooLargeIsCodexs(t *testing.T) {
	m := newFakeModel(callResponse("c1", "view_image", map[string]any{"path": "huge.png"}),
		callResponse("c2", "view_image", map[string]any{"path": "big.png"}), textResponse("msg_1", "seen"))
	h := newHarness(t, m, nil)
	writeFile(t, filepath.Join(h.dir, "huge.png"), string(imagetest.PNGHeader(60000, 60000)))
	// A file past the input limit (sparse: it is refused before it is read).
	if err := os.Truncate(writeFileAt(t, filepath.Join(h.dir, "big.png")), imageinput.MaxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("look")})
	until(t, th, isTurnCompleted)
	m.request(t)
	m.request(t)
	last := m.request(t)
	outs := 0
	for _, it := range last.Input {
		if it.Type == prompt.TypeFunctionCallOutput {
			outs++
			if it.Output == nil || *it.Output != codexViewImageBad {
				t.Errorf("view_image %s: %+v", it.CallID, it)
			}
		}
	}
	if outs != 2 {
		t.Errorf("%d view_image outputs, want 2", outs)
	}
}

func writeFileAt(t *testing.T, path string) string {
	t.Helper()
	writeFile(t, path, "")
	return path
}
