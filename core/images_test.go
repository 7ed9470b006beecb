package core

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
)

func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// partShape is a content part as the tests compare it: its type, text,
// detail, and an image's MIME type and size.
func partShape(t *testing.T, c prompt.Content) string {
	if c.Type != "input_image" {
		return c.Type + " " + c.Text
	}
	if !strings.HasPrefix(c.ImageURL, "data:") {
		return "input_image " + c.ImageURL + " " + c.Detail
	}
	mime, b64, _ := strings.Cut(strings.TrimPrefix(c.ImageURL, "data:"), ";base64,")
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "input_image " + c.ImageURL + " " + c.Detail
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the image %s does not decode: %v (%q)", mime, err, data[:min(len(data), 16)])
	}
	return fmt.Sprintf("input_image %s %dx%d %s", mime, cfg.Width, cfg.Height, c.Detail)
}

// TestLocalImagesReachTheModel: local images go to the model as Codex
// 0.169 sends them (side by side: a tag naming the image, the image as a
// data URL, the closing tag; images numbered in their message; original
// detail for gpt-5.5 and its limits), read through the exec-server.
func TestLocalImagesReachTheModel(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"))
	h := newHarness(t, m, nil)
	small := testPNG(t, 4, 3)
	writeFile(t, filepath.Join(h.dir, "small.png"), string(small))
	writeFile(t, filepath.Join(h.dir, "wide.png"), string(testPNG(t, 7000, 10)))
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 10, 10), []color.Color{color.Black}), nil); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.dir, "dot.gif"), g.String())
	writeFile(t, filepath.Join(h.dir, "notes.png"), "not an image")

	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: []agent.Input{
		{Type: "text", Text: "look"},
		{Type: "image", URL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(small)},
		{Type: "localImage", Path: filepath.Join(h.dir, "small.png")},
		{Type: "localImage", Path: "wide.png"},
		{Type: "localImage", Path: filepath.Join(h.dir, "dot.gif")},
		{Type: "localImage", Path: filepath.Join(h.dir, "notes.png")},
		{Type: "localImage", Path: filepath.Join(h.dir, "missing.png")},
		{Type: "localImage", Path: h.dir},
		{Type: "image", URL: "file:///x.png"},
	}})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	msg := req.Input[len(req.Input)-1]
	var got []string
	for _, c := range msg.Content {
		got = append(got, partShape(t, c))
	}
	d := h.dir
	want := []string{
		"input_text look",
		"input_image image/png 4x3 original",
		`input_text <image name=[Image #2] path="` + d + `/small.png">`,
		"input_image image/png 4x3 original",
		"input_text </image>",
		`input_text <image name=[Image #3] path="wide.png">`,
		"input_image image/png 6000x9 original",
		"input_text </image>",
		`input_text <image name=[Image #4] path="` + d + `/dot.gif">`,
		"input_image image/png 10x10 original",
		"input_text </image>",
		`input_text <image name=[Image #5] path="` + d + `/notes.png">`,
		"input_text " + imageUnusableText,
		"input_text </image>",
		"input_text codexd could not read the local image at `" + d + "/missing.png`: No such file or directory (os error 2)",
		"input_text codexd could not read the local image at `" + d + "`: Is a directory (os error 21)",
		"input_image file:///x.png high",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the message's parts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// An image that fits goes out byte for byte.
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(small); msg.Content[3].ImageURL != want {
		t.Errorf("the small PNG was re-encoded")
	}

	// A model without original detail gets high detail and its limits.
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "localImage", Path: "wide.png"}, {Type: "localImage", Path: "small.png", Detail: "low"}}, Overrides: agent.Overrides{Model: strp("mystery-model")}})
	until(t, th, isTurnCompleted)
	req = m.request(t)
	msg = req.Input[len(req.Input)-1]
	got = got[:0]
	for _, c := range msg.Content {
		got = append(got, partShape(t, c))
	}
	want = []string{
		`input_text <image name=[Image #1] path="wide.png">`,
		"input_image image/png 2048x3 high",
		"input_text </image>",
		`input_text <image name=[Image #2] path="small.png">`,
		"input_text " + imageLowDetailText,
		"input_text </image>",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the second message's parts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestResponsesLiteImagesGoWithoutDetail: a Responses Lite model (code
// mode) is sent its images without a detail, as Codex does; the history
// keeps it.
func TestResponsesLiteImagesGoWithoutDetail(t *testing.T) {
	m := newFakeModel(textResponse("msg_1", "ok"), textResponse("msg_2", "ok"))
	h := newHarness(t, m, nil)
	writeFile(t, filepath.Join(h.dir, "small.png"), string(testPNG(t, 3, 2)))
	th := h.start(agent.Overrides{Model: strp("codex-auto-review")})
	h.submit(th, agent.UserInput{Input: []agent.Input{{Type: "localImage", Path: "small.png"}}})
	until(t, th, isTurnCompleted)
	req := m.request(t)
	img := req.Input[len(req.Input)-1].Content[1]
	if img.Type != "input_image" || img.Detail != "" {
		t.Fatalf("the image part: %s %q", img.Type, img.Detail)
	}
	h.submit(th, agent.UserInput{Input: text("again"), Overrides: agent.Overrides{Model: strp("gpt-5.5")}})
	until(t, th, isTurnCompleted)
	req = m.request(t)
	for _, it := range req.Input {
		for _, c := range it.Content {
			if c.Type == "input_image" && c.Detail != detailOriginal {
				t.Fatalf("the history lost the image's detail: %q", c.Detail)
			}
		}
	}
}

func TestImageURLParts(t *testing.T) {
	p := imagePrep{}
	for _, c := range []struct{ url, want string }{
		{"https://example.com/a.png", "input_text " + imageRemoteText},
		{"HTTP://example.com/a.png", "input_text " + imageRemoteText},
		{"data:text/plain;base64,aGVsbG8=", "input_text " + imageUnusableText},
		{"data:image/png;base64,%%%", "input_text " + imageUnusableText},
	} {
		if got := partShape(t, p.imageURLPart(agent.Input{Type: "image", URL: c.url})); got != c.want {
			t.Errorf("%s: %s, want %s", c.url, got, c.want)
		}
	}
	empty := imagePrep{read: func(string) ([]byte, error) { return nil, os.ErrNotExist }}
	if got := partShape(t, empty.localImageParts(agent.Input{Path: ""}, 1)[0]); got != "input_text codexd could not read the local image at ``: No such file or directory (os error 2)" {
		t.Errorf("an empty path: %s", got)
	}
}
