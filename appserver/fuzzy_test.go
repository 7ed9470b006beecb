package appserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/codexd/codexd/agent/agenttest"
)

func fuzzyTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range []string{"src/app/server.go", "src/main.go", "docs/guide.md", "build/out.bin"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestFuzzyFileSearch: the one-shot search answers in Codex 0.169's shape
// (snake_case members, match_type, indices), and bad roots give no files.
func TestFuzzyFileSearch(t *testing.T) {
	root := fuzzyTree(t)
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(nil)
	r := c.call("fuzzyFileSearch", map[string]any{"query": "srv", "roots": []string{root}})
	var files []map[string]any
	if err := pointer(r.Result, "/files", &files); err != nil || len(files) != 1 {
		t.Fatalf("fuzzyFileSearch: %s (%v)", r, err)
	}
	f := files[0]
	if f["path"] != "src/app/server.go" || f["root"] != root || f["file_name"] != "server.go" || f["match_type"] != "file" ||
		f["score"] != float64(65603) {
		t.Fatalf("match: %v", f)
	}
	if idx, _ := f["indices"].([]any); len(idx) != 3 || idx[0] != float64(8) {
		t.Fatalf("indices: %v", f["indices"])
	}
	for _, roots := range [][]string{{}, {"/nonexistent/x"}, {"relative/dir"}} {
		r := c.call("fuzzyFileSearch", map[string]any{"query": "srv", "roots": roots})
		if err := pointer(r.Result, "/files", &files); err != nil || len(files) != 0 {
			t.Fatalf("roots %v: %s", roots, r)
		}
	}
	if err := c.callErr("fuzzyFileSearch", map[string]any{"query": 5, "roots": []string{root}}); err == nil || err.Code != -32600 {
		t.Fatalf("a number for query: %+v", err)
	}
}

// TestFuzzyFileSearchSession follows what Codex 0.169 sends: the walk's end
// reports the empty query, each update reports its matches then that they
// are complete, an unknown session is -32600, no roots is -32603, and a
// stop of an unknown session is no error.
func TestFuzzyFileSearchSession(t *testing.T) {
	root := fuzzyTree(t)
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(map[string]any{"experimentalApi": true})
	other := e.dial("b")
	other.initialize(map[string]any{"experimentalApi": true})

	c.call("fuzzyFileSearch/sessionStart", map[string]any{"sessionId": "s1", "roots": []string{root}})
	n := c.note("fuzzyFileSearch/sessionUpdated")
	if n.str(t, "/sessionId") != "s1" || n.str(t, "/query") != "" {
		t.Fatalf("first report: %s", n)
	}
	c.note("fuzzyFileSearch/sessionCompleted")
	c.call("fuzzyFileSearch/sessionUpdate", map[string]any{"sessionId": "s1", "query": "main"})
	n = c.next("main's matches", func(m *wmsg) bool {
		var q string
		return m.Method == "fuzzyFileSearch/sessionUpdated" && m.param("/query", &q) == nil && q == "main"
	})
	var files []map[string]any
	if err := n.param("/files", &files); err != nil || len(files) != 1 || files[0]["path"] != "src/main.go" {
		t.Fatalf("main: %s", n)
	}
	// Reports go to every initialized connection, as Codex broadcasts them.
	other.next("the broadcast", func(m *wmsg) bool {
		var q string
		return m.Method == "fuzzyFileSearch/sessionUpdated" && m.param("/query", &q) == nil && q == "main"
	})
	if err := c.callErr("fuzzyFileSearch/sessionUpdate", map[string]any{"sessionId": "nope", "query": "a"}); err == nil ||
		err.Code != -32600 || err.Message != "fuzzy file search session not found: nope" {
		t.Fatalf("unknown session: %+v", err)
	}
	if err := c.callErr("fuzzyFileSearch/sessionStart", map[string]any{"sessionId": "s2", "roots": []string{}}); err == nil ||
		err.Code != -32603 || err.Message != "failed to start fuzzy file search session: at least one search directory is required" {
		t.Fatalf("no roots: %+v", err)
	}
	c.call("fuzzyFileSearch/sessionStop", map[string]any{"sessionId": "s1"})
	c.call("fuzzyFileSearch/sessionStop", map[string]any{"sessionId": "s1"})
	if err := c.callErr("fuzzyFileSearch/sessionUpdate", map[string]any{"sessionId": "s1", "query": "a"}); err == nil || err.Code != -32600 {
		t.Fatalf("a stopped session: %+v", err)
	}
	// A session left running is stopped with the server (goleak checks).
	c.call("fuzzyFileSearch/sessionStart", map[string]any{"sessionId": "s3", "roots": []string{root}})
}

// TestFuzzySessionsNeedExperimental: the session methods are experimental
// in Codex 0.169.
func TestFuzzySessionsNeedExperimental(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("a")
	c.initialize(nil)
	if err := c.callErr("fuzzyFileSearch/sessionStart", map[string]any{"sessionId": "s1", "roots": []string{t.TempDir()}}); err == nil {
		t.Fatal("a session started without experimentalApi")
	}
}
