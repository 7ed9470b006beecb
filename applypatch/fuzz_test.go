package applypatch

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse parses arbitrary text and, when it parses, computes and applies
// it over a file with arbitrary contents: nothing may panic, a parsed patch
// must parse again from its Text to the same hunks, Compute may only fail
// with a *VerifyError, and Apply only with a *WriteError or ErrNoFiles.
// Seeds: testdata/fuzz/FuzzParse.
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
		m := newMemFS(files)
		plan, err := Compute(context.Background(), m, "/w", p)
		if err != nil {
			var ve *VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Compute error %T: %v", err, err)
			}
			return
		}
		if _, err := plan.Apply(context.Background(), m); err != nil {
			var we *WriteError
			if !errors.As(err, &we) && !errors.Is(err, ErrNoFiles) {
				t.Fatalf("Apply error %T: %v", err, err)
			}
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
