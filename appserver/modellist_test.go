package appserver

import (
	"context"
	"errors"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/core"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/modelinfo"
)

// modelListCore is a core with catalog (nil: Codex 0.169's built-in one).
func modelListCore(t *testing.T, cat *modelinfo.Catalog) *core.Core {
	t.Helper()
	c, err := core.New(core.Config{
		Settings:  agent.Settings{Model: "mock-model", ModelProvider: "mock", Cwd: t.TempDir()},
		CodexHome: t.TempDir(), Catalog: cat,
		Providers: map[string]*core.Provider{"mock": {Name: "mock", Client: &echoModel{}}},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return nil, errors.New("no exec-server in this test")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func listModels(t *testing.T, c *core.Core, params map[string]any) appproto.ModelListResponse {
	t.Helper()
	srv, err := New(Config{Core: c, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv}
	t.Cleanup(func() { srv.Close() })
	cl := e.dial("models")
	cl.initialize(nil)
	var out appproto.ModelListResponse
	if err := pointer(cl.call(appproto.MethodModelList, params).Result, "", &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// model/list reports Codex 0.169's catalogue as its model/list does: by
// priority, the hidden models only when asked for, the first visible one
// the default, each with its efforts, default effort, tiers and upgrade.
func TestModelListIsCodexCatalog(t *testing.T) {
	c := modelListCore(t, nil)
	visible := listModels(t, c, map[string]any{})
	var ids []string
	for _, m := range visible.Data {
		ids = append(ids, m.ID)
	}
	want := []string{"gpt-6.1-sol", "gpt-6-astra", "gpt-6-sol", "gpt-6-luna", "gpt-5.6-sol", "gpt-6.1-terra", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5"}
	if len(ids) != len(want) {
		t.Fatalf("visible models %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("visible models %v, want %v", ids, want)
		}
	}
	all := listModels(t, c, map[string]any{"includeHidden": true})
	if len(all.Data) != 12 {
		t.Fatalf("%d models with the hidden ones, want 12", len(all.Data))
	}
	for _, m := range all.Data {
		if m.IsDefault != (m.ID == "gpt-6.1-sol") {
			t.Fatalf("%s isDefault %v", m.ID, m.IsDefault)
		}
		switch m.ID {
		case "gpt-5.5":
			if m.DefaultReasoningEffort != "medium" || len(m.SupportedReasoningEfforts) != 4 ||
				m.SupportedReasoningEfforts[3].ReasoningEffort != "xhigh" || m.Upgrade == nil || *m.Upgrade != "gpt-6-sol" ||
				m.MultiAgentVersion != nil || len(m.ServiceTiers) != 1 || m.Hidden {
				t.Fatalf("gpt-5.5: %+v", m)
			}
		case "gpt-6-sol":
			if m.DefaultServiceTier == nil || *m.DefaultServiceTier != "priority" || m.DefaultReasoningEffort != "medium" {
				t.Fatalf("gpt-6-sol: %+v", m)
			}
		case "codex-auto-review":
			if !m.Hidden || m.MultiAgentVersion == nil || *m.MultiAgentVersion != "v1" {
				t.Fatalf("codex-auto-review: %+v", m)
			}
		case "gpt-daybreak-blue-latest":
			if m.ModelSpecialty == nil || *m.ModelSpecialty != "cyber" {
				t.Fatalf("daybreak: %+v", m)
			}
		}
		for _, e := range m.SupportedReasoningEfforts {
			if e.Description == "" {
				t.Fatalf("%s: effort %s without a description", m.ID, e.ReasoningEffort)
			}
		}
	}
}

// model_catalog_json replaces the list, as in Codex.
func TestModelListFollowsModelCatalogJSON(t *testing.T) {
	cat, err := modelinfo.Parse([]byte(`{"models": [
	  {"slug": "late", "visibility": "list", "priority": 9, "supported_reasoning_levels": [{"effort": "high"}], "default_reasoning_level": "high", "truncation_policy": {"mode": "bytes", "limit": 100}},
	  {"slug": "early", "display_name": "Early", "visibility": "list", "priority": 2, "supported_reasoning_levels": [{"effort": "low"}, {"effort": "medium"}], "truncation_policy": {"mode": "tokens", "limit": 100}},
	  {"slug": "secret", "visibility": "hide", "priority": 1, "supported_reasoning_levels": [], "truncation_policy": {"mode": "tokens", "limit": 100}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := listModels(t, modelListCore(t, cat), map[string]any{}).Data
	if len(got) != 2 || got[0].ID != "early" || got[0].DisplayName != "Early" || !got[0].IsDefault ||
		got[1].ID != "late" || got[1].IsDefault || got[1].DefaultReasoningEffort != "high" || len(got[0].SupportedReasoningEfforts) != 2 {
		t.Fatalf("model/list over model_catalog_json: %+v", got)
	}
}
