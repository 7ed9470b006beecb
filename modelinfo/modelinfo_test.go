package modelinfo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func ptr(n int64) *int64 { return &n }

// The built-in catalog is 0.169's: the twelve models of `codex debug
// models`, with the values that shape requests.
func TestBuiltinCatalog(t *testing.T) {
	c := Builtin()
	if len(c.Models) != 12 {
		t.Fatalf("%d models, want the 12 of Codex 0.169", len(c.Models))
	}
	g := Lookup("gpt-5.5")
	if g.Fallback || g.CodeMode() || !g.ParallelToolCalls() || g.Instructions() != InstructionsGeneral {
		t.Fatalf("gpt-5.5: %+v", g)
	}
	if g.ContextWindow != 272000 || g.AutoCompactLimit() != 244800 || g.EffectiveContextWindow() != 258400 {
		t.Fatalf("gpt-5.5 windows: %d %d %d", g.ContextWindow, g.AutoCompactLimit(), g.EffectiveContextWindow())
	}
	if g.ApplyPatchToolType != ApplyPatchFreeform || g.ShellType != ShellUnifiedExec || g.DefaultVerbosity != "low" ||
		g.DefaultReasoningLevel != "medium" || g.DefaultReasoningSummary != "none" || g.Truncation != (TruncationPolicy{TruncateTokens, 10000}) {
		t.Fatalf("gpt-5.5: %+v", g)
	}
	if want := []string{"low", "medium", "high", "xhigh"}; !reflect.DeepEqual(g.Efforts(), want) {
		t.Fatalf("gpt-5.5 efforts %v, want %v", g.Efforts(), want)
	}
	a := Lookup("codex-auto-review")
	if !a.CodeMode() || a.ParallelToolCalls() || !a.UseResponsesLite || a.Instructions() != InstructionsCodeMode {
		t.Fatalf("codex-auto-review: %+v", a)
	}
	if Lookup("gpt-6.1-terra").ContextWindow != 500000 {
		t.Fatal("gpt-6.1-terra's window is 500000")
	}
}

func TestLookupPrefixAndNamespace(t *testing.T) {
	if got := Lookup("gpt-5.5-2026-01-01").Slug; got != "gpt-5.5" {
		t.Fatalf("a dated gpt-5.5 resolves to %q", got)
	}
	// gpt-6.1-sol is longer than gpt-6 prefixes of other entries.
	if got := Lookup("gpt-6.1-sol-preview").Slug; got != "gpt-6.1-sol" {
		t.Fatalf("got %q", got)
	}
	if got := Lookup("openai/gpt-5.5").Slug; got != "gpt-5.5" {
		t.Fatalf("namespaced: got %q", got)
	}
	for _, m := range []string{"a/b/gpt-5.5", "bad ns/gpt-5.5", "/gpt-5.5", "mystery", ""} {
		if i := Lookup(m); !i.Fallback || i.Slug != m {
			t.Fatalf("%q: %+v, want the fallback", m, i)
		}
	}
}

func TestFallback(t *testing.T) {
	f := Lookup("mystery-model")
	if f.ContextWindow != 272000 || f.AutoCompactLimit() != 244800 || f.Truncation != (TruncationPolicy{TruncateBytes, 10000}) ||
		f.ApplyPatchToolType != "" || f.SupportVerbosity || !f.ParallelToolCalls() || f.DefaultReasoningSummary != "auto" ||
		f.DefaultReasoningLevel != "" || f.Instructions() != InstructionsFallback {
		t.Fatalf("fallback: %+v", f)
	}
}

func TestOverrides(t *testing.T) {
	g := Lookup("gpt-6-sol").With(Overrides{ContextWindow: ptr(2_000_000), AutoCompactTokenLimit: ptr(100), ToolOutputTokenLimit: ptr(500)})
	if g.ContextWindow != 872000 || g.AutoCompactLimit() != 100 || g.Truncation != (TruncationPolicy{TruncateTokens, 500}) {
		t.Fatalf("%+v", g)
	}
	// A configured limit above 90% of the window does not raise it.
	g = Lookup("gpt-5.5").With(Overrides{AutoCompactTokenLimit: ptr(1 << 40)})
	if g.AutoCompactLimit() != 244800 {
		t.Fatal(g.AutoCompactLimit())
	}
	f := Lookup("x").With(Overrides{ToolOutputTokenLimit: ptr(300)})
	if f.Truncation != (TruncationPolicy{TruncateBytes, 1200}) {
		t.Fatalf("bytes policy: %+v", f.Truncation)
	}
}

func TestLoadCatalog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cat.json")
	if err := os.WriteFile(p, []byte(`{"models":[{"slug":"my-model","context_window":1000,"truncation_policy":{"mode":"tokens","limit":7}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Lookup("my-model")
	if m.Fallback || m.ContextWindow != 1000 || m.AutoCompactLimit() != 900 || m.Truncation.Limit != 7 || m.DisplayName != "my-model" {
		t.Fatalf("%+v", m)
	}
	// The file replaces the built-in catalog.
	if !c.Lookup("gpt-5.5").Fallback {
		t.Fatal("gpt-5.5 found in a catalog that does not list it")
	}
	for _, bad := range []string{`[]`, `{}`, `{"models":[{}]}`, `{"models":[{"slug":"a","truncation_policy":{"mode":"lines","limit":1}}]}`,
		`{"models":[{"slug":"a","context_window":-1}]}`, `{"models":[{"slug":"a","effective_context_window_percent":101}]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Fatalf("Parse(%s) accepted", bad)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "model_catalog_json") {
		t.Fatalf("missing file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(builtinJSON)
	f.Add([]byte(`{"models":[{"slug":"a"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		for _, m := range c.Models {
			i := c.Lookup(m.Slug)
			if i.Fallback || i.ResolvedContextWindow() < 0 || i.AutoCompactLimit() < 0 {
				t.Fatalf("%+v", i)
			}
		}
	})
}

// model/list's order is Codex 0.169's: by priority, gpt-6.1-sol first
// (priority 1), codex-auto-review last (43); the upgrade target is kept.
func TestListedOrder(t *testing.T) {
	var got []string
	for _, m := range Builtin().Listed() {
		got = append(got, m.Slug)
	}
	want := []string{"gpt-6.1-sol", "gpt-6-astra", "gpt-6-sol", "gpt-6-luna", "gpt-5.6-sol", "gpt-6.1-terra",
		"gpt-5.6-terra", "gpt-5.6-luna", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest", "gpt-5.5", "codex-auto-review"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v\nwant %v", got, want)
	}
	l := Builtin().Listed()
	if g := l[10]; g.Upgrade == nil || g.Upgrade.Model != "gpt-6-sol" || !g.Visible() {
		t.Fatalf("gpt-5.5: %+v", g)
	}
	if l[11].Visible() || l[0].Upgrade != nil {
		t.Fatalf("codex-auto-review is hidden and gpt-6.1-sol has no upgrade")
	}
	// Copies: changing one leaves the catalog alone.
	l[0].SupportedReasoningLevels[0].Effort = "changed"
	if Builtin().Listed()[0].SupportedReasoningLevels[0].Effort == "changed" {
		t.Fatal("Listed shares the catalog's slices")
	}
}
