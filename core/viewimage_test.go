package core

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/compaction"
	"github.com/codexd/codexd/core/prompt"
)

// TestViewImage: view_image is offered to a model that takes images, reads
// the file through the exec-server (a relative path from the cwd), and
// answers with the image as a list of one input_image, as Codex 0.169
// does; a missing file or one that is no image is answered with a text,
// and only a shown image is an item.
func TestViewImage(t *testing.T) {
	m := newFakeModel(
		callResponse("c1", "view_image", map[string]any{"path": "small.png"}),
		callResponse("c2", "view_image", map[string]any{"path": "nope.png"}),
		callResponse("c3", "view_image", map[string]any{"path": "notes.txt"}),
		callResponse("c4", "view_image", map[string]any{}),
		callResponse("c5", "view_image", map[string]any{"path": "."}),
		textResponse("msg_1", "seen"),
	)
	h := newHarness(t, m, nil)
	small := testPNG(t, 4, 3)
	writeFile(t, filepath.Join(h.dir, "small.png"), string(small))
	writeFile(t, filepath.Join(h.dir, "notes.txt"), "text")
	th := h.start(agent.Overrides{Model: strp("gpt-5.5")})
	h.submit(th, agent.UserInput{Input: text("look")})
	evs := until(t, th, isTurnCompleted)

	first := m.request(t)
	var last *prompt.Request
	for range 5 {
		last = m.request(t)
	}
	var offered bool
	for _, raw := range first.Tools {
		if strings.Contains(string(raw), `"name":"view_image"`) {
			offered = true
			if want := `"parameters":{"additionalProperties":false,"properties":{"path":{"description":"The image file's path.","type":"string"}},"required":["path"],"type":"object"}`; !strings.Contains(string(raw), want) {
				t.Errorf("view_image spec %s", raw)
			}
		}
	}
	if !offered {
		t.Fatalf("view_image not offered")
	}
	outs := map[string]prompt.Item{}
	for _, it := range last.Input {
		if it.Type == prompt.TypeFunctionCallOutput {
			outs[it.CallID] = it
		}
	}
	img := outs["c1"]
	if img.Output != nil || len(img.OutputContent) != 1 {
		t.Fatalf("c1 output %+v", img)
	}
	if c := img.OutputContent[0]; c.Type != "input_image" || c.Detail != "original" || c.ImageURL != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(small) {
		t.Errorf("c1 image %s %s %.40s", c.Type, c.Detail, c.ImageURL)
	}
	texts := map[string]string{
		"c2": "unable to locate image at `" + filepath.Join(h.dir, "nope.png") + "`: No such file or directory (os error 2)",
		"c3": viewImageBadImage,
		"c4": "failed to parse function arguments: missing field `path` at line 1 column 2",
		"c5": "image path `" + h.dir + "` is not a file",
	}
	for id, want := range texts {
		if o := outs[id]; o.Output == nil || *o.Output != want {
			t.Errorf("%s output %+v, want %q", id, o.Output, want)
		}
	}
	views := itemsCompleted[*agent.ImageView](evs)
	if len(views) != 1 || views[0].ID != "c1" || views[0].Path != filepath.Join(h.dir, "small.png") {
		t.Errorf("image views %+v", views)
	}
	// The output survives the rollout as a list.
	b, err := img.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back prompt.Item
	if err := back.UnmarshalJSON(b); err != nil || back.Output != nil || len(back.OutputContent) != 1 || back.OutputContent[0].ImageURL != img.OutputContent[0].ImageURL {
		t.Fatalf("round trip of %s: %+v %v", b[:80], back, err)
	}
	if !strings.Contains(string(b), `"output":[{"type":"input_image","image_url":"data:image/png;base64,`) {
		t.Errorf("serialised as %.120s", b)
	}
}

// An image in a tool's output is counted as an image, not as its URL.
func TestViewImageOutputTokens(t *testing.T) {
	url := "data:image/png;base64," + strings.Repeat("A", 400_000)
	out := prompt.Item{Type: prompt.TypeFunctionCallOutput, CallID: "c", OutputContent: []prompt.Content{{Type: "input_image", ImageURL: url}}}
	msg := prompt.Item{Type: prompt.TypeMessage, Role: "user", Content: []prompt.Content{{Type: "input_image", ImageURL: url}}}
	if a, b := compaction.ItemTokens(out), compaction.ItemTokens(msg); a != b || a < 765 || a > 1000 {
		t.Errorf("an output image counts %d tokens, a message's %d", a, b)
	}
}
