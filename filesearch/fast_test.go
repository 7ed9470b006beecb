package filesearch

import (
	"strings"
	"testing"
)

// checkFast holds the fast path to the reference scorer for one query and
// path: the same match, the same score, and a bound no score exceeds.
func checkFast(t *testing.T, q, path string, isDir bool) {
	t.Helper()
	p := parsePattern(q)
	e := newEntry(0, path, isDir)
	var fast, ref matcher
	s, matched, admit := fast.probe(&p, &e, &topN{ents: []entry{e}})
	want, _, ok := ref.scoreEntry(p, e)
	if matched != ok || admit != ok || ok && s != want {
		t.Fatalf("%q in %q (dir %v): fast %d matched %v admit %v, reference %d %v", q, path, isDir, s, matched, admit, want, ok)
	}
	if ok && e.ascii && int(want&0xffff) > p.bound {
		t.Fatalf("%q in %q: score %d above the bound %d", q, path, want&0xffff, p.bound)
	}
}

func TestFastPathMatchesReference(t *testing.T) {
	ents := benchEntries()
	queries := []string{"s", "serv", "serverha", "handlerC", "cfg", "tok12", "core_3", "zz", "a b", "go", "/", "a/c", "ALPHA9/", "e e e", "ü"}
	for i := 0; i < len(ents); i += 37 {
		for _, q := range queries {
			checkFast(t, q, ents[i].path, i%2 == 0)
		}
	}
	for _, c := range [][2]string{{"serv", "serv"}, {"serv", "x/serv"}, {"a", strings.Repeat("b", maxMatchRunes) + "/a"}, {"ba", strings.Repeat("b", maxMatchRunes) + "/a"}, {"xy", "x/" + strings.Repeat("y", maxMatchRunes+1)}} {
		checkFast(t, c[0], c[1], false)
		checkFast(t, c[0], c[1], true)
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range [][2]string{{"srv", "src/app/server.go"}, {"a b", "x/a/b"}, {"ÜML", "ümlaut"}, {"", ""}, {"//", "a//b"}, {"fooBar", "x_foo/BarFoo.bar"}, {"a1", "A1/a-1/a 1"}} {
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, q, path string, isDir bool) {
		checkFast(t, q, path, isDir)
	})
}

// TestChildEntry: an entry made from its parent's is the one newEntry
// makes from the whole path.
func TestChildEntry(t *testing.T) {
	for _, c := range [][2]string{{"a", "b"}, {"Src/App", "Main.go"}, {"src", "ÜML.go"}, {"Ü", "x"}, {"a b/C", "d-E_f9.txt"}, {"x", "Y"}} {
		for _, isDir := range []bool{false, true} {
			parent := newEntry(1, c[0], true)
			got, want := childEntry(1, parent, c[1], isDir), newEntry(1, c[0]+"/"+c[1], isDir)
			if got != want {
				t.Errorf("%q + %q: %+v, want %+v", c[0], c[1], got, want)
			}
		}
	}
	if got, want := childEntry(0, entry{}, "Top", false), newEntry(0, "Top", false); got != want {
		t.Errorf("top: %+v, want %+v", got, want)
	}
}
