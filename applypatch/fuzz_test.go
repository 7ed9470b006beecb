package applypatch

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzParse parses arbitrary text and, when it parses, computes and applies
// it over a file with arbitrary contents: nothing may panic, a parsed patch
// must parse again from its Text to the same hunks, Compute may only fail
// with a *VerifyError, and a plan it verified must apply (ErrNoFiles aside)
// or fail, writing nothing, where Compute foresaw it: any other failure
// would be a partial write. Rebase
// over the unchanged files gives the same plan. Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(wrap("*** Update File: f\n@@\n-a\n+b"), "a\n")
	f.Fuzz(func(t *testing.T, patch, file string) {
		p, err := Parse(patch)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T", err)
			}
			return
		}
		again, err := Parse(p.Text)
		if err != nil || !reflect.DeepEqual(again.Hunks, p.Hunks) {
			t.Fatalf("Text %q does not parse back: %v", p.Text, err)
		}
		files := map[string]string{}
		for _, h := range p.Hunks {
			files[ResolvePath("/w", h.Path)] = file
		}
		// A path under another one's file would make that file a
		// directory too: keep the upper one, a file in the way.
		for path := range files {
			for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
				if _, ok := files[d]; ok {
					delete(files, path)
					break
				}
			}
		}
		m := newMemFS(files)
		plan, err := Compute(context.Background(), m, "/w", p)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Compute error %T: %v", err, err)
			}
			return
		}
		if again, err := Rebase(context.Background(), m, plan, p); err != nil || !reflect.DeepEqual(again, plan) {
			t.Fatalf("rebase over unchanged files: %v\n got %+v\nwant %+v", err, again, plan)
		}
		// memFS fails nothing by itself: what Compute verified applies, or
		// fails as Compute foresaw, having written nothing.
		before := m.snapshot()
		_, err = plan.Apply(context.Background(), m)
		var we *WriteError
		switch {
		case err == nil || errors.Is(err, ErrNoFiles):
		case plan.blocked != nil && errors.As(err, &we) && we.Path == plan.blocked.path && len(we.Written) == 0 && m.snapshot() == before:
		default:
			t.Fatalf("a verified plan failed to apply: %v", err)
		}
	})
}

// FuzzIntercept feeds arbitrary scripts to the shell recogniser.
// Seeds: testdata/fuzz/FuzzIntercept.
func FuzzIntercept(f *testing.F) {
	f.Add(heredocScript("cd foo && "))
	f.Fuzz(func(t *testing.T, script string) {
		inv, err := Intercept([]string{"bash", "-lc", script})
		if inv != nil && (err != nil || inv.Patch == nil) {
			t.Fatalf("invocation %#v with error %v", inv, err)
		}
	})
}

// FuzzUnifiedDiff checks that every diff replays to the new text.
// Seeds: testdata/fuzz/FuzzUnifiedDiff.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if got := applyUnified(t, old, UnifiedDiff(old, new, 1)); got != new {
			t.Fatalf("diff of %q -> %q replays to %q", old, new, got)
		}
	})
}
