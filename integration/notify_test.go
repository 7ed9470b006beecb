//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/mockmodel"
)

// TestNotifySideBySide: config.toml's notify program gets the same
// arguments from codexd as from the real Codex 0.169 for the same two
// turns of an app-server thread (ids aside, which each side makes).
func TestNotifySideBySide(t *testing.T) {
	codex, codexd, ok := oneHomeBins(t, "TestNotifySideBySide")
	if !ok {
		return
	}
	model := mockmodel.New(mockmodel.Options{})
	url, err := model.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })

	var got [2][]map[string]any
	for i, side := range []struct{ name, bin string }{{"codex", codex}, {"codexd", codexd}} {
		home, work := t.TempDir(), t.TempDir()
		fifo := filepath.Join(home, "calls")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(home, "notify.sh")
		writeFile(t, script, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \""+fifo+"\"\n")
		if err := os.Chmod(script, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(home, "config.toml"), "notify = [\""+script+"\", \"first\"]\n"+twoWayConfig(url))
		calls := make(chan string, 2)
		go func() {
			for range 2 {
				b, err := os.ReadFile(fifo)
				if err != nil {
					return
				}
				calls <- string(b)
			}
		}()
		app := startTwoWayApp(t, side.name, side.bin, home, work)
		res := app.call(t, "thread/start", map[string]any{"cwd": work})
		tid, _ := lookupPath(res, "thread.id")
		for _, prompt := range []string{"MOCK:hello notify one", "MOCK:exec echo notify-two"} {
			h := app.runPrompt(t, tid.(string), prompt)
			var call string
			select {
			case call = <-calls:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s did not run the notify program within 30s of the turn's end", side.name)
			}
			args := strings.SplitN(strings.TrimSuffix(call, "\n"), "\n", 2)
			if len(args) != 2 || args[0] != "first" {
				t.Fatalf("%s ran notify with %q", side.name, call)
			}
			var p map[string]any
			if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
				t.Fatalf("%s: notify's JSON %q: %v", side.name, args[1], err)
			}
			if p["thread-id"] != tid || p["turn-id"] != h["id"] || p["cwd"] != work {
				t.Errorf("%s: notify's ids or cwd: %s (thread %v, turn %v, cwd %s)", side.name, args[1], tid, h["id"], work)
			}
			delete(p, "thread-id")
			delete(p, "turn-id")
			delete(p, "cwd")
			t.Logf("%s: %s", side.name, args[1])
			got[i] = append(got[i], p)
		}
		app.stop(t)
	}
	a, _ := json.Marshal(got[0])
	b, _ := json.Marshal(got[1])
	if string(a) != string(b) {
		t.Errorf("notify's JSON (ids and cwd aside) differs:\n Codex  %s\n codexd %s", a, b)
	}
}
