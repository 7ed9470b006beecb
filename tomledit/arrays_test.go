package tomledit

import (
	"errors"
	"testing"
)

// TestArrayTables: entries are appended after a blank line, at the end of
// the document or after the array's last entry, and deleted with the
// comments above them; everything else stays as it was. The expected
// texts are what Codex 0.169's skills/config/write left in a config.toml.
func TestArrayTables(t *testing.T) {
	path := []string{"skills", "config"}
	doc, err := Parse([]byte("# my comment\nmodel = \"m\"\n\n[features]\nplugins = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	step := func(err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(doc.Bytes()); got != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	}
	step(doc.AppendArrayTable(path, &Map{Keys: []string{"path", "enabled"}, Values: []any{"/w/a/SKILL.md", false}}),
		"# my comment\nmodel = \"m\"\n\n[features]\nplugins = false\n\n[[skills.config]]\npath = \"/w/a/SKILL.md\"\nenabled = false\n")
	step(doc.AppendArrayTable(path, &Map{Keys: []string{"name", "enabled"}, Values: []any{"helper", false}}),
		"# my comment\nmodel = \"m\"\n\n[features]\nplugins = false\n\n[[skills.config]]\npath = \"/w/a/SKILL.md\"\nenabled = false\n\n[[skills.config]]\nname = \"helper\"\nenabled = false\n")
	if n := doc.ArrayTables(path); n != 2 {
		t.Fatalf("%d entries", n)
	}
	step(doc.DeleteArrayTable(path, 0),
		"# my comment\nmodel = \"m\"\n\n[features]\nplugins = false\n\n[[skills.config]]\nname = \"helper\"\nenabled = false\n")
	step(doc.DeleteArrayTable(path, 0), "# my comment\nmodel = \"m\"\n\n[features]\nplugins = false\n")
	if err := doc.DeleteArrayTable(path, 0); err == nil {
		t.Fatal("deleted an entry that is not there")
	}

	// A new entry goes after the array's last one, before a later table.
	doc, _ = Parse([]byte("[[skills.config]]\nname = \"a\" # keep\nenabled = false\n\n# about tui\n[tui]\nx = 1\n"))
	step(doc.AppendArrayTable(path, &Map{Keys: []string{"name", "enabled"}, Values: []any{"b", false}}),
		"[[skills.config]]\nname = \"a\" # keep\nenabled = false\n\n[[skills.config]]\nname = \"b\"\nenabled = false\n\n# about tui\n[tui]\nx = 1\n")
	step(doc.AppendArrayTable([]string{"x"}, &Map{Keys: []string{"k"}, Values: []any{int64(1)}}),
		"[[skills.config]]\nname = \"a\" # keep\nenabled = false\n\n[[skills.config]]\nname = \"b\"\nenabled = false\n\n# about tui\n[tui]\nx = 1\n\n[[x]]\nk = 1\n")

	// An empty document gets no blank line first.
	doc, _ = Parse(nil)
	step(doc.AppendArrayTable(path, &Map{Keys: []string{"name", "enabled"}, Values: []any{"a", false}}), "[[skills.config]]\nname = \"a\"\nenabled = false\n")

	// A path held as a value or a table is no array of tables.
	for _, src := range []string{"[skills]\nconfig = []\n", "[skills.config]\nx = 1\n"} {
		doc, _ = Parse([]byte(src))
		if err := doc.AppendArrayTable(path, &Map{}); !errors.Is(err, ErrNotArrayOfTables) {
			t.Fatalf("%q: %v", src, err)
		}
	}
}
