package appserver

import (
	"fmt"
	"testing"

	"github.com/codexd/codexd/appproto"
)

// A thread/read right after the answer of a thread/settings/update has
// the new cwd, as in Codex 0.169, whose thread/read reads the live thread:
// the answer comes once the thread has the settings, before
// thread/settings/updated is projected. Before, thread/read reported what
// the listener had projected so far, often the old cwd.
func TestThreadReadAfterSettingsUpdate(t *testing.T) {
	home, serverCwd := t.TempDir(), t.TempDir()
	r := newRealEnv(t, home, serverCwd)
	c := r.dial("read")
	c.initialize(map[string]any{"experimentalApi": true})
	id := c.startThread(nil)
	for i := range 50 {
		want := fmt.Sprintf("%s/d%d", serverCwd, i)
		c.call(appproto.MethodThreadSettingsUpdate, map[string]any{"threadId": id, "cwd": want})
		read := c.call(appproto.MethodThreadRead, map[string]any{"threadId": id})
		if got := read.str(t, "/thread/cwd"); got != want {
			t.Fatalf("update %d: thread/read cwd %q, want %q", i, got, want)
		}
		if got := read.str(t, "/thread/environments/0/cwd"); got != want {
			t.Fatalf("update %d: thread/read environment cwd %q, want %q", i, got, want)
		}
	}
}
