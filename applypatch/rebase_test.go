package applypatch

import (
	"context"
	"errors"
	"testing"
)

// Rebase applies the hunks to the files as they are now, and refuses, with
// a *ConflictError and before any write, whatever would lose something
// written since the plan was computed.
func TestRebase(t *testing.T) {
	cases := []struct {
		name   string
		patch  string
		before map[string]string
		now    map[string]string
		want   map[string]string // the files after applying; nil: a conflict
		path   string            // the conflict's path
	}{
		{"unchanged", "*** Update File: f\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "A\n"}, ""},
		{"edit elsewhere kept", "*** Update File: f\n@@\n x\n-a\n+A",
			map[string]string{"/w/f": "x\na\n"}, map[string]string{"/w/f": "new\nx\na\nmore\n"}, map[string]string{"/w/f": "new\nx\nA\nmore\n"}, ""},
		{"context edited", "*** Update File: f\n@@\n x\n-a\n+A",
			map[string]string{"/w/f": "x\na\n"}, map[string]string{"/w/f": "y\na\n"}, nil, "/w/f"},
		{"replaced line edited in whitespace", "*** Update File: f\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "a \n"}, nil, "/w/f"},
		{"line ending changed", "*** Update File: f\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "a\r\n"}, nil, "/w/f"},
		{"file gone", "*** Update File: f\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{}, nil, "/w/f"},
		{"delete of an edited file", "*** Delete File: f",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "b\n"}, nil, "/w/f"},
		{"add over a new file", "*** Add File: f\n+x",
			map[string]string{}, map[string]string{"/w/f": "mine\n"}, nil, "/w/f"},
		{"add over a new binary file", "*** Add File: f\n+x",
			map[string]string{"/w/f": "\xff1"}, map[string]string{"/w/f": "\xff2"}, nil, "/w/f"},
		{"add over the same file", "*** Add File: f\n+x",
			map[string]string{"/w/f": "old\n"}, map[string]string{"/w/f": "old\n"}, map[string]string{"/w/f": "x\n"}, ""},
		{"move onto a new file", "*** Update File: f\n*** Move to: g\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "a\n", "/w/g": "mine\n"}, nil, "/w/g"},
		{"move keeps an edit of its source", "*** Update File: f\n*** Move to: g\n@@\n-a\n+A",
			map[string]string{"/w/f": "a\n"}, map[string]string{"/w/f": "a\nb\n"}, map[string]string{"/w/g": "A\nb\n"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParse(t, wrap(c.patch))
			plan, err := Compute(context.Background(), newMemFS(c.before), "/w", p)
			if err != nil {
				t.Fatal(err)
			}
			m := newMemFS(c.now)
			before := m.snapshot()
			got, err := Rebase(context.Background(), m, plan, p)
			if m.snapshot() != before || len(m.ops) != 0 {
				t.Fatalf("Rebase wrote: %v", m.ops)
			}
			if c.want == nil {
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Path != c.path {
					t.Fatalf("error %v (%T), want a conflict on %s", err, err, c.path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := got.Apply(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if want := newMemFS(c.want).snapshot(); m.snapshot() != want {
				t.Fatalf("files\n got %s\nwant %s", m.snapshot(), want)
			}
		})
	}
}
