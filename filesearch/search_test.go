package filesearch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorded is testdata/codex_scores.json: a tree, and what Codex 0.169's
// app-server answered to fuzzyFileSearch queries over it.
type recorded struct {
	Tree      []string                       `json:"tree"`
	Gitignore string                         `json:"gitignore"`
	Queries   map[string][][]json.RawMessage `json:"queries"`
}

func loadRecorded(t *testing.T) (recorded, string) {
	t.Helper()
	b, err := os.ReadFile("testdata/codex_scores.json")
	if err != nil {
		t.Fatal(err)
	}
	var r recorded
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, p := range r.Tree {
		full := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/")))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		body := ""
		if p == ".gitignore" {
			body = r.Gitignore
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return r, root
}

// TestScoresMatchCodex: every query Codex answered gets the same paths, in
// the same order, with the same scores and matched indices, but for the
// one documented difference: every directory named exactly as the query is
// in the exact-name tier, where Codex 0.169 puts only one of several.
func TestScoresMatchCodex(t *testing.T) {
	r, root := loadRecorded(t)
	for q, want := range r.Queries {
		got := Search(context.Background(), q, []string{root})
		type row struct {
			path    string
			score   uint32
			dir     bool
			indices string
		}
		var wantRows []row
		for _, w := range want {
			var p, kind string
			var score uint32
			_ = json.Unmarshal(w[0], &p)
			_ = json.Unmarshal(w[1], &score)
			_ = json.Unmarshal(w[2], &kind)
			if kind == "directory" && strings.EqualFold(filepath.Base(p), q) && score < tierExactName {
				score += tierExactName
			}
			var idx []uint32
			_ = json.Unmarshal(w[3], &idx)
			ib, _ := json.Marshal(idx)
			wantRows = append(wantRows, row{p, score, kind == "directory", string(ib)})
		}
		var gotRows []row
		for _, m := range got {
			b, _ := json.Marshal(m.Indices)
			gotRows = append(gotRows, row{m.Path, m.Score, m.IsDir, string(b)})
			if m.Root != root || m.FileName != filepath.Base(m.Path) {
				t.Errorf("%q: %s: root %q, file name %q", q, m.Path, m.Root, m.FileName)
			}
		}
		// Codex's order among equal scores is by path, as ours; the rows
		// are compared as sets of equal-score groups through the sort.
		sortRows := func(rs []row) {
			for i := 1; i < len(rs); i++ {
				for k := i; k > 0 && (rs[k].score > rs[k-1].score || rs[k].score == rs[k-1].score && rs[k].path < rs[k-1].path); k-- {
					rs[k], rs[k-1] = rs[k-1], rs[k]
				}
			}
		}
		sortRows(wantRows)
		if len(gotRows) != len(wantRows) {
			t.Errorf("%q: %d matches, Codex %d:\n got %v\nwant %v", q, len(gotRows), len(wantRows), gotRows, wantRows)
			continue
		}
		for i := range gotRows {
			if gotRows[i] != wantRows[i] {
				t.Errorf("%q: match %d = %+v, Codex %+v", q, i, gotRows[i], wantRows[i])
			}
		}
	}
}

func TestGitignoreAndHidden(t *testing.T) {
	_, root := loadRecorded(t)
	for _, m := range Search(context.Background(), "out", []string{root}) {
		if strings.HasPrefix(m.Path, "build/") {
			t.Errorf("ignored build/ listed: %s", m.Path)
		}
	}
	if ms := Search(context.Background(), "secret", []string{root}); len(ms) == 0 || ms[0].Path != ".hidden/secret.txt" {
		t.Errorf("a hidden file is not found: %+v", ms)
	}
	// A nested ignore file, and a negation in it.
	sub := filepath.Join(root, "docs")
	os.WriteFile(filepath.Join(sub, ".gitignore"), []byte("*.md\n!keep.md\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "keep.md"), nil, 0o644)
	var paths []string
	for _, m := range Search(context.Background(), "md", []string{root}) {
		paths = append(paths, m.Path)
	}
	if strings.Contains(strings.Join(paths, " "), "docs/guide.md") || !strings.Contains(strings.Join(paths, " "), "docs/keep.md") {
		t.Errorf("nested .gitignore not honoured: %v", paths)
	}
}

func TestEdgeInputs(t *testing.T) {
	_, root := loadRecorded(t)
	for _, tc := range []struct {
		q     string
		roots []string
	}{{"", []string{root}}, {"   ", []string{root}}, {"srv", nil}, {"srv", []string{"/nonexistent/x"}}, {"srv", []string{"relative/dir"}}, {"zzzzzz", []string{root}}} {
		if got := Search(context.Background(), tc.q, tc.roots); got == nil || len(got) != 0 {
			t.Errorf("Search(%q, %v) = %v, want an empty list", tc.q, tc.roots, got)
		}
	}
	// A link cycle ends.
	os.Symlink(root, filepath.Join(root, "src", "loop"))
	if ms := Search(context.Background(), "main", []string{root}); len(ms) == 0 {
		t.Errorf("nothing found beside a link cycle")
	}
}

func TestLimit(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 120; i++ {
		os.WriteFile(filepath.Join(root, "file"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt"), nil, 0o644)
	}
	if got := Search(context.Background(), "file", []string{root}); len(got) != Limit {
		t.Errorf("%d matches, want the limit %d", len(got), Limit)
	}
}

func TestSession(t *testing.T) {
	_, root := loadRecorded(t)
	if _, err := NewSession(nil, func(Update) {}); err != ErrNoRoots {
		t.Fatalf("no roots: %v", err)
	}
	ups := make(chan Update, 64)
	s, err := NewSession([]string{root}, func(u Update) { ups <- u })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next := func() Update {
		t.Helper()
		select {
		case u := <-ups:
			return u
		case <-time.After(10 * time.Second):
			t.Fatal("no report")
		}
		return Update{}
	}
	// The walk's end reports the empty query, as Codex does.
	if u := next(); u.Query != "" || len(u.Matches) != 0 || u.Complete {
		t.Fatalf("first report %+v", u)
	}
	if u := next(); !u.Complete {
		t.Fatalf("second report %+v", u)
	}
	s.Set("srv")
	u := next()
	if u.Query != "srv" || len(u.Matches) != 2 || u.Matches[0].Path != "src/app/Server_test.go" {
		t.Fatalf("srv: %+v", u)
	}
	if u := next(); !u.Complete || u.Query != "srv" {
		t.Fatalf("srv end: %+v", u)
	}
	// The listing is the walk's: a file made after it is not found.
	os.WriteFile(filepath.Join(root, "srvnew.txt"), nil, 0o644)
	s.Set("srvnew")
	if u := next(); len(u.Matches) != 0 {
		t.Fatalf("a file made after the walk: %+v", u)
	}
	next()
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"srv", "src/app/server.go"}, {"a b", "x/a/b"}, {"ÜML", "ümlaut"}, {"", ""}, {"//", "a//b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, q, path string) {
		var m matcher
		p := parsePattern(q)
		s, idx, ok := m.score(p, path)
		if !ok {
			return
		}
		if s < 0 {
			t.Fatalf("negative score %d", s)
		}
		n := len([]rune(path))
		for i, x := range idx {
			if x < 0 || x >= n || i > 0 && x <= idx[i-1] {
				t.Fatalf("indices %v for %q in %q", idx, q, path)
			}
		}
	})
}

// TestSessionNarrowingMatchesAFreshSearch: a session narrows each query
// that extends the last to what the last matched; the answers must be a
// fresh search's.
func TestSessionNarrowingMatchesAFreshSearch(t *testing.T) {
	_, root := loadRecorded(t)
	ups := make(chan Update, 64)
	s, err := NewSession([]string{root}, func(u Update) { ups <- u })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	final := func(q string) []Match {
		t.Helper()
		var last []Match
		for {
			select {
			case u := <-ups:
				if u.Query == q && u.Complete {
					return last
				}
				if u.Query == q {
					last = u.Matches
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no final report for %q", q)
			}
		}
	}
	final("")
	for _, q := range []string{"s", "sr", "src", "src/", "src/a", "src/ap", "src/app s", "x", "xy", "ü", "üm"} {
		s.Set(q)
		got := final(q)
		want := Search(context.Background(), q, []string{root})
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%q: session %s\nfresh %s", q, gb, wb)
		}
	}
}
