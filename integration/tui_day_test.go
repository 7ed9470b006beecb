//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg" // the model may be sent a JPEG
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// The TUI's working day (issue 17), each feature driven on screen in the
// Codex 0.169 TUI (`codex --remote ws://…`) on `codexd app-server`, as in
// TestCodexTUIOnCodexdAppServer: an image pasted by path, /ps and /stop,
// and /model saved across a restart.

const dayWait = 60 * time.Second

// startDayStack runs the test named name inside a loopback-only network
// namespace (building codexd first) and, inside it, starts the stack:
// codexd app-server on a mock model, the TUI on it. It returns nil outside
// the namespace, once the test has run there.
func startDayStack(t *testing.T, name, extraConfig string) *tuiStack {
	t.Helper()
	codex := codexBin(t)
	tmuxBin(t)
	if !inNetns() {
		t.Setenv("CODEXD_TUI_TEST_BIN", buildCodexd(t))
		runInNetns(t, name, 3*time.Minute)
		return nil
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo: %v", err)
	}
	st := startTUIStack(t, codex, os.Getenv("CODEXD_TUI_TEST_BIN"), mockmodel.Options{}, extraConfig)
	st.waitStarted()
	return st
}

// waitStarted waits until the TUI's thread has started. The composer and
// the status line's model show before that, and until then the TUI
// refuses /model ("disabled until startup completes"; a path pasted that
// early also stayed text). The thread's start shows in the header, whose
// "loading" becomes the work dir, above the list of commands to try.
func (st *tuiStack) waitStarted() {
	st.t.Helper()
	st.tui.waitFor("the thread to start", dayWait, func(s string) bool {
		return strings.Contains(s, ">_ OpenAI Codex") && !strings.Contains(s, "loading") &&
			strings.Contains(s, "To get started") && strings.Contains(st.server.proxy.transcript(100000), `"method":"thread/started"`)
	})
}

// command types text in the composer, waits for it there, and sends it.
func (st *tuiStack) command(text string) {
	st.t.Helper()
	st.tui.send(true, text)
	st.tui.waitText(dayWait, "› "+text)
	st.tui.send(false, "Enter")
}

// paste pastes text into the pane as a terminal pastes it: bracketed, when
// the program asked for that (the TUI does), so the TUI sees one paste.
func (s *tmuxSession) paste(text string) {
	s.t.Helper()
	if out, err := s.cmd("set-buffer", "-b", "paste", "--", text).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux set-buffer: %v: %s", err, out)
	}
	if out, err := s.cmd("paste-buffer", "-p", "-d", "-b", "paste", "-t", s.name).CombinedOutput(); err != nil {
		s.t.Fatalf("tmux paste-buffer: %v: %s", err, out)
	}
}

// TestCodexTUIDayImage: the path of a PNG pasted in the composer attaches
// the image ([Image #1]); sent with a prompt, it reaches the model as an
// input_image holding that picture.
func TestCodexTUIDayImage(t *testing.T) {
	st := startDayStack(t, "TestCodexTUIDayImage", "")
	if st == nil {
		return
	}
	// A picture of its own size and colour, to know it at the model.
	const w, h = 48, 30
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: 200, G: 30, B: 90, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(st.work, "picture.png")
	writeFile(t, pic, buf.String())

	st.tui.paste(pic)
	st.tui.waitText(dayWait, "› [Image #1]")
	st.tui.send(true, "MOCK:hello what is in the picture")
	st.tui.waitText(dayWait, "› [Image #1] MOCK:hello what is in the picture")
	st.tui.send(false, "Enter")
	st.tui.waitText(dayWait, mockmodel.HelloText)

	ex := lastAnswered(t, st.model, 0, "MOCK:hello")
	var body struct {
		Input []struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL string `json:"image_url"`
			} `json:"content"`
		} `json:"input"`
	}
	if err := json.Unmarshal(ex.Body, &body); err != nil {
		t.Fatalf("the model request: %v", err)
	}
	var parts []string // the user message's parts, in order: text, or "image"
	var got image.Image
	for _, it := range body.Input {
		if it.Role != "user" {
			continue
		}
		for _, c := range it.Content {
			if c.Type != "input_image" {
				parts = append(parts, c.Text)
				continue
			}
			parts = append(parts, "image")
			data, ok := strings.CutPrefix(c.ImageURL, "data:image/")
			_, b64, ok2 := strings.Cut(data, ";base64,")
			if !ok || !ok2 {
				t.Fatalf("input_image's image_url is not a base64 data URL: %.80s", c.ImageURL)
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatalf("input_image's data: %v", err)
			}
			if got, _, err = image.Decode(bytes.NewReader(raw)); err != nil {
				t.Fatalf("input_image's picture: %v", err)
			}
		}
	}
	if got == nil {
		t.Fatalf("the model got no input_image; the user's parts: %q", parts)
	}
	if b := got.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("the model's picture is %dx%d, want the pasted %dx%d", b.Dx(), b.Dy(), w, h)
	}
	if r, g, b, _ := got.At(w/2, h/2).RGBA(); r>>8 < 190 || g>>8 > 40 || b>>8 < 80 || b>>8 > 100 {
		t.Fatalf("the model's picture is not the pasted one: its middle is %d,%d,%d", r>>8, g>>8, b>>8)
	}
	// The TUI reads the file itself and sends it as an image input (a data
	// URL: the server may be remote), which reaches the model as Codex
	// sends one: the picture alone, before the prompt's text.
	if want := "image|[Image #1] MOCK:hello what is in the picture"; !strings.Contains(strings.Join(parts, "|"), want) {
		t.Fatalf("the user message's parts are %q, want the picture, then the prompt", parts)
	}
	st.quit(dayWait)
}

// TestCodexTUIDayPS: a command the model leaves running in the background
// (exec_command answers before it ends) is listed by /ps, and /stop ends
// it through thread/backgroundTerminals/clean: the process is gone, and
// the TUI no longer counts it.
func TestCodexTUIDayPS(t *testing.T) {
	st := startDayStack(t, "TestCodexTUIDayPS", "")
	if st == nil {
		return
	}
	// The shell writes its pid, then becomes the sleep: the pid is the
	// background process's own.
	const bg = "echo $$ > bg.pid; exec sleep 3600"
	call, _ := json.Marshal(map[string]any{"cmd": bg, "yield_time_ms": 1000})
	st.command("MOCK:tool exec_command " + string(call))
	st.tui.waitText(dayWait, "It printed:", "1 background terminal running · /ps to view · /stop to close")
	// The shell may not have written its pid yet when the TUI shows the
	// terminal (under load, even when exec_command has answered).
	pid := 0
	eventually(t, "the background command's pid in bg.pid", dayWait, func() bool {
		b, err := os.ReadFile(filepath.Join(st.work, "bg.pid"))
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 1
	})
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the background process %d is not running: %v", pid, err)
	}

	st.command("/ps")
	// The TUI lists what it saw start (the commandExecution items that
	// have not ended); it does not ask codexd.
	st.tui.waitFor("/ps listing the command", dayWait, func(s string) bool {
		return afterLast(s, "Background terminals", "  • "+bg)
	})

	st.command("/stop")
	st.tui.waitFor("/stop to end the background terminals", dayWait, func(s string) bool {
		return strings.Contains(s, "Stopping all background terminals.") && !strings.Contains(s, "background terminal running")
	})
	if !strings.Contains(st.server.proxy.transcript(100000), `"method":"thread/backgroundTerminals/clean"`) {
		t.Fatal("/stop did not ask codexd with thread/backgroundTerminals/clean")
	}
	// Gone: killed and reaped.
	eventually(t, "the background process to be gone after /stop", dayWait, func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	st.quit(dayWait)
}

// eventually polls cond until it holds, or fails the test after timeout:
// a file another process writes, or another's process, is observed no
// other way.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not so after %s", what, timeout)
		case <-tick.C:
		}
	}
}

// dayCatalog is a model_catalog_json of two models, so that /model offers
// a choice the test knows.
const dayCatalog = `{"models": [
 {"slug": "mock-model", "display_name": "Mock Model", "priority": 1, "visibility": "list", "supported_in_api": true,
  "default_reasoning_level": "medium", "supported_reasoning_levels": [{"effort": "low"}, {"effort": "medium"}, {"effort": "high"}],
  "truncation_policy": {"mode": "bytes", "limit": 10000}},
 {"slug": "mock-model-pro", "display_name": "Mock Model Pro", "priority": 2, "visibility": "list", "supported_in_api": true,
  "default_reasoning_level": "medium", "supported_reasoning_levels": [{"effort": "low"}, {"effort": "medium"}, {"effort": "high"}],
  "truncation_policy": {"mode": "bytes", "limit": 10000}}
]}`

// TestCodexTUIDayModelRestart: /model picks another model and effort and
// saves them as the default; after the TUI and the app-server are quit
// and started again on the same CODEX_HOME, the status line shows the
// new model, a prompt goes to it, and config.toml holds it with the
// file's comments and everything else as they were.
func TestCodexTUIDayModelRestart(t *testing.T) {
	root := t.TempDir()
	catalog := filepath.Join(root, "catalog.json")
	if inNetns() {
		writeFile(t, catalog, dayCatalog)
	}
	st := startDayStack(t, "TestCodexTUIDayModelRestart", "# The models codexd offers.\nmodel_catalog_json = "+strconv.Quote(catalog)+"  # two mocks\n")
	if st == nil {
		return
	}
	cfgPath := filepath.Join(st.serverHome, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st.tui.waitText(dayWait, "Mock Model default")

	st.command("/model")
	// Each list starts at the current or default choice; Down moves one
	// (and wraps from the last to the first).
	st.tui.waitText(dayWait, "Select Model and Effort", "› 1. Mock Model", "2. Mock Model Pro")
	st.tui.send(false, "Down")
	st.tui.waitText(dayWait, "› 2. Mock Model Pro")
	st.tui.send(false, "Enter")
	st.tui.waitText(dayWait, "Select Reasoning Level for Mock Model Pro", "› 2. Medium (default)", "3. High")
	st.tui.send(false, "Down")
	st.tui.waitText(dayWait, "› 3. High")
	st.tui.send(false, "Enter") // Enter saves it as the default ("s": this session only)
	st.tui.waitText(dayWait, "Model changed to mock-model-pro high")
	if tr := st.server.proxy.transcript(100000); !strings.Contains(tr, `"method":"config/batchWrite"`) && !strings.Contains(tr, `"method":"config/value/write"`) {
		t.Fatal("/model saved nothing through config/batchWrite or config/value/write")
	}

	// Saved: the model replaced in place, the effort added, and not a
	// comment or a line of the rest changed.
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	const effort = "model_reasoning_effort = \"high\"\n"
	if !bytes.Contains(after, []byte(effort)) {
		t.Fatalf("config.toml lacks %q after /model:\n%s", effort, after)
	}
	want := strings.Replace(string(before), `model = "mock-model"`, `model = "mock-model-pro"`, 1)
	if got := strings.Replace(string(after), effort, "", 1); got != want {
		t.Fatalf("config.toml after /model:\n%s\nwant, besides the effort line:\n%s", after, want)
	}

	st.quit(dayWait)
	st.launch()
	st.waitStarted()
	st.tui.waitText(dayWait, "Mock Model Pro high")
	n := len(st.model.Requests())
	st.command("MOCK:hello after the restart")
	st.tui.waitText(dayWait, mockmodel.HelloText)
	ex := lastAnswered(t, st.model, n, "MOCK:hello")
	var req struct {
		Model     string `json:"model"`
		Reasoning struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if err := json.Unmarshal(ex.Body, &req); err != nil {
		t.Fatal(err)
	}
	if req.Model != "mock-model-pro" || req.Reasoning.Effort != "high" {
		t.Fatalf("after the restart the model was asked as %q at effort %q, want mock-model-pro at high", req.Model, req.Reasoning.Effort)
	}
	st.quit(dayWait)
}
