package applypatch

import (
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, text string) *Patch {
	t.Helper()
	p, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return p
}

// Every error the parser can give, with Codex's text and line number.
func TestParseErrors(t *testing.T) {
	validHeaders := "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
	cases := []struct {
		name, patch, want string
	}{
		{"empty", "", "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"blank", " \n\t\n", "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"no begin", "bad", "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"no end", "*** Begin Patch\nbad", "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"begin only", "*** Begin Patch", "invalid patch: The last line of the patch must be '*** End Patch'"},
		{"end only", "*** End Patch", "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"prose before", "Here is the patch:\n*** Begin Patch\n*** End Patch", "invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"bad header", "*** Begin Patch\nfoo\n*** End Patch",
			"invalid hunk at line 2, 'foo' is not a valid hunk header. " + validHeaders},
		{"git diff header", "*** Begin Patch\n*** Add File: a\n+x\ndiff --git a/x b/x\n*** End Patch",
			"invalid hunk at line 4, 'diff --git a/x b/x' is not a valid hunk header. " + validHeaders},
		{"add line without plus", "*** Begin Patch\n*** Add File: x\nhello\n*** End Patch",
			"invalid hunk at line 3, 'hello' is not a valid hunk header. " + validHeaders},
		{"add without path", "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
			"invalid hunk at line 2, '*** Add File:' is not a valid hunk header. " + validHeaders},
		{"empty update", "*** Begin Patch\n*** Update File: test.py\n*** End Patch",
			"invalid hunk at line 2, Update file hunk for path 'test.py' is empty"},
		{"empty update with move", "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch",
			"invalid hunk at line 2, Update file hunk for path 'a' is empty"},
		{"bare @@", "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch",
			"invalid hunk at line 4, Update hunk does not contain any lines"},
		{"@@ then eof marker", "*** Begin Patch\n*** Update File: a\n@@\n*** End of File\n*** End Patch",
			"invalid hunk at line 4, Update hunk does not contain any lines"},
		{"unexpected line", "*** Begin Patch\n*** Update File: c.txt\n@@\nfoo\n*** End Patch",
			"invalid hunk at line 4, Unexpected line found in update hunk: 'foo'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"},
		// The tool instructions suggest stacking "@@ class" and "@@ def";
		// Codex's parser refuses it, and so does this one.
		{"stacked @@ lines", "*** Begin Patch\n*** Update File: c.py\n@@ class A:\n@@   def f():\n-    pass\n*** End Patch",
			"invalid hunk at line 4, Unexpected line found in update hunk: '@@   def f():'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"},
		{"second chunk without @@", "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End of File\nz\n*** End Patch",
			"invalid hunk at line 7, Expected update hunk to start with a @@ context marker, got: 'z'"},
		{"line numbers count earlier hunks", "*** Begin Patch\n*** Add File: a\n+1\n+2\n*** Delete File: b\n*** Update File: c\n*** End Patch",
			"invalid hunk at line 6, Update file hunk for path 'c' is empty"},
		{"heredoc without end marker", "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n",
			"invalid patch: The last line of the patch must be '*** End Patch'"},
		{"heredoc with mismatched quotes", "<<\"EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n",
			"invalid patch: The first line of the patch must be '*** Begin Patch'"},
		{"heredoc too short", "<<EOF\n*** Begin Patch\nEOF",
			"invalid patch: The first line of the patch must be '*** Begin Patch'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.patch)
			if err == nil {
				t.Fatalf("Parse succeeded, want %q", c.want)
			}
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %T, want *ParseError", err)
			}
			if err.Error() != c.want {
				t.Fatalf("error\n got %q\nwant %q", err.Error(), c.want)
			}
		})
	}
}

func TestParseErrorStderrText(t *testing.T) {
	_, err := Parse("bad")
	if got := err.(*ParseError).StderrText(); got != "Invalid patch: The first line of the patch must be '*** Begin Patch'" {
		t.Fatal(got)
	}
	_, err = Parse("*** Begin Patch\n*** Update File: c.txt\n*** End Patch")
	if got := err.(*ParseError).StderrText(); got != "Invalid patch hunk on line 2: Update file hunk for path 'c.txt' is empty" {
		t.Fatal(got)
	}
}

func TestParseAllHunkKinds(t *testing.T) {
	p := mustParse(t, "*** Begin Patch\n"+
		"*** Add File: path/add.py\n+abc\n+def\n"+
		"*** Delete File: path/delete.py\n"+
		"*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n+    return 123\n"+
		"*** End Patch")
	want := []Hunk{
		{Kind: KindAdd, Path: "path/add.py", Contents: "abc\ndef\n"},
		{Kind: KindDelete, Path: "path/delete.py"},
		{Kind: KindUpdate, Path: "path/update.py", MovePath: "path/update2.py", Chunks: []Chunk{{
			Context: "def f():", HasContext: true,
			OldLines: []string{"    pass"}, NewLines: []string{"    return 123"},
		}}},
	}
	if !reflect.DeepEqual(p.Hunks, want) {
		t.Fatalf("hunks\n got %#v\nwant %#v", p.Hunks, want)
	}
}

func TestParseChunkShapes(t *testing.T) {
	cases := []struct {
		name, body string
		want       []Chunk
	}{
		{"first chunk without @@", " import foo\n+bar",
			[]Chunk{{OldLines: []string{"import foo"}, NewLines: []string{"import foo", "bar"}}}},
		{"context, blank and eof", "@@ change_context\n\n context\n-remove\n+add\n context2\n*** End of File",
			[]Chunk{{Context: "change_context", HasContext: true,
				OldLines:  []string{"", "context", "remove", "context2"},
				NewLines:  []string{"", "context", "add", "context2"},
				EndOfFile: true}}},
		{"two chunks, blank lines between", "@@\n foo\n-bar\n+BAR\n\n\n@@\n baz\n-qux\n+QUX",
			[]Chunk{
				// Blank lines inside a chunk are empty context lines.
				{OldLines: []string{"foo", "bar", "", ""}, NewLines: []string{"foo", "BAR", "", ""}},
				{OldLines: []string{"baz", "qux"}, NewLines: []string{"baz", "QUX"}},
			}},
		{"@@ ends the previous chunk", "@@ a\n-x\n@@ b\n+y",
			[]Chunk{
				{Context: "a", HasContext: true, OldLines: []string{"x"}},
				{Context: "b", HasContext: true, NewLines: []string{"y"}},
			}},
		{"pure addition", "@@\n+line", []Chunk{{NewLines: []string{"line"}}}},
		{"@@ with spaces keeps them", "@@   indented\n-x", []Chunk{{Context: "  indented", HasContext: true, OldLines: []string{"x"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParse(t, "*** Begin Patch\n*** Update File: f\n"+c.body+"\n*** End Patch")
			if len(p.Hunks) != 1 {
				t.Fatalf("%d hunks", len(p.Hunks))
			}
			if !reflect.DeepEqual(p.Hunks[0].Chunks, c.want) {
				t.Fatalf("chunks\n got %#v\nwant %#v", p.Hunks[0].Chunks, c.want)
			}
		})
	}
}

func TestParseUpdateFollowedByAdd(t *testing.T) {
	p := mustParse(t, "*** Begin Patch\n*** Update File: file.py\n@@\n+line\n*** Add File: other.py\n+content\n*** End Patch")
	if len(p.Hunks) != 2 || p.Hunks[1].Kind != KindAdd || p.Hunks[1].Contents != "content\n" {
		t.Fatalf("%#v", p.Hunks)
	}
}

func TestParseEmptyPatch(t *testing.T) {
	p := mustParse(t, "*** Begin Patch\n*** End Patch")
	if len(p.Hunks) != 0 || p.Text != "*** Begin Patch\n*** End Patch" {
		t.Fatalf("%#v", p)
	}
}

// The lenient modes: what Codex accepts beyond the grammar.
func TestParseLenient(t *testing.T) {
	inner := "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch"
	wantHunks := []Hunk{{Kind: KindUpdate, Path: "file2.py", Chunks: []Chunk{{
		OldLines: []string{"import foo"}, NewLines: []string{"import foo", "bar"}}}}}
	cases := []struct{ name, text, wantText string }{
		{"plain", inner, inner},
		{"heredoc", "<<EOF\n" + inner + "\nEOF\n", inner},
		{"single-quoted heredoc", "<<'EOF'\n" + inner + "\nEOF\n", inner},
		{"double-quoted heredoc", "<<\"EOF\"\n" + inner + "\nEOF\n", inner},
		{"surrounding whitespace", "\n\n  " + inner + "  \n\n", inner},
		{"CRLF", strings.ReplaceAll(inner, "\n", "\r\n"), inner},
		{"padded markers", "*** Begin Patch \n  *** Update File: file2.py  \n import foo\n+bar\n   *** End Patch", "*** Begin Patch \n  *** Update File: file2.py  \n import foo\n+bar\n   *** End Patch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParse(t, c.text)
			if !reflect.DeepEqual(p.Hunks, wantHunks) {
				t.Fatalf("hunks\n got %#v\nwant %#v", p.Hunks, wantHunks)
			}
			if p.Text != c.wantText {
				t.Fatalf("text %q, want %q", p.Text, c.wantText)
			}
		})
	}
}

func TestParseKeepsAbsolutePaths(t *testing.T) {
	p := mustParse(t, "*** Begin Patch\n*** Add File: relative-add.py\n+content\n*** Delete File: /abs/delete.py\n*** Update File: /abs/update.py\n@@\n-old\n+new\n*** End Patch")
	if p.Hunks[0].Path != "relative-add.py" || p.Hunks[1].Path != "/abs/delete.py" || p.Hunks[2].Path != "/abs/update.py" {
		t.Fatalf("%#v", p.Hunks)
	}
}

func TestSeekSequence(t *testing.T) {
	cases := []struct {
		name           string
		lines, pattern []string
		start          int
		eof            bool
		want           int
	}{
		{"exact", []string{"foo", "bar", "baz"}, []string{"bar", "baz"}, 0, false, 1},
		{"trailing whitespace", []string{"foo   ", "bar\t\t"}, []string{"foo", "bar"}, 0, false, 0},
		{"surrounding whitespace", []string{"    foo   ", "   bar\t"}, []string{"foo", "bar"}, 0, false, 0},
		{"unicode dash", []string{"x \u2013 y"}, []string{"x - y"}, 0, false, 0},
		{"unicode quotes and nbsp", []string{"say \u201chi\u201d\u00a0it\u2019s"}, []string{"say \"hi\" it's"}, 0, false, 0},
		{"pattern too long", []string{"just one line"}, []string{"too", "many", "lines"}, 0, false, -1},
		{"empty pattern", []string{"a"}, nil, 1, false, 1},
		{"from start", []string{"a", "b", "a"}, []string{"a"}, 1, false, 2},
		{"not found", []string{"a"}, []string{"b"}, 0, false, -1},
		{"eof tries the end only", []string{"a", "b", "c"}, []string{"a"}, 0, true, -1},
		{"eof at end", []string{"x", "y", "x", "y"}, []string{"x", "y"}, 0, true, 2},
		{"exact beats a looser earlier match", []string{"foo ", "foo"}, []string{"foo"}, 0, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := seekSequence(c.lines, c.pattern, c.start, c.eof); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}
