package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOverride(t *testing.T) {
	cases := []struct {
		in   string
		path []string
		val  any
	}{
		{"model=o3", []string{"model"}, "o3"},
		{`model="o3"`, []string{"model"}, "o3"},
		{"model = 'o3' ", []string{"model"}, "o3"},
		{"model_providers.mock.base_url=http://127.0.0.1:1/v1", []string{"model_providers", "mock", "base_url"}, "http://127.0.0.1:1/v1"},
		{"model_providers.mock.request_max_retries=0", []string{"model_providers", "mock", "request_max_retries"}, int64(0)},
		{"sandbox_workspace_write.network_access=true", []string{"sandbox_workspace_write", "network_access"}, true},
		{`shell_environment_policy.include_only=["PATH", "HOME"]`, []string{"shell_environment_policy", "include_only"}, []any{"PATH", "HOME"}},
		{"x={a = 1, b = 2}", []string{"x"}, map[string]any{"a": int64(1), "b": int64(2)}},
		{"x=not toml [", []string{"x"}, "not toml ["},
		{"x=", []string{"x"}, ""},
		{"x=a=b", []string{"x"}, "a=b"},
	}
	for _, c := range cases {
		o, err := ParseOverride(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if !reflect.DeepEqual(o.Path, c.path) || !reflect.DeepEqual(o.Value, c.val) {
			t.Errorf("%q: got %q %#v, want %q %#v", c.in, o.Path, o.Value, c.path, c.val)
		}
	}
	for _, bad := range []string{"model", "=x", " =x", "a..b=1", "a.=1"} {
		if _, err := ParseOverride(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOverridesApplyBeforeProfile(t *testing.T) {
	cfg, err := parseFile(t, "observed.toml", LoadOptions{Overrides: []string{
		"model_providers.mock.base_url=http://127.0.0.1:9/v1",
		"model_providers.mock.stream_idle_timeout_ms=5",
		"approval_policy=on-failure",
		"model=override-model",
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Other fields of the provider survive a dotted override.
	if cfg.Provider.BaseURL != "http://127.0.0.1:9/v1" || cfg.Provider.StreamIdleTimeout != 5*time.Millisecond ||
		cfg.Provider.EnvKey != "MOCK_API_KEY" || cfg.Provider.Name != "Mock Responses" {
		t.Fatalf("provider %+v", cfg.Provider)
	}
	if cfg.ApprovalPolicy != ApprovalOnFailure || cfg.Model != "override-model" {
		t.Fatalf("%+v", cfg)
	}
	// Raw shows the overridden tree.
	mp := cfg.Raw["model_providers"].(map[string]any)["mock"].(map[string]any)
	if mp["base_url"] != "http://127.0.0.1:9/v1" || mp["name"] != "Mock Responses" {
		t.Fatalf("raw %#v", mp)
	}

	// A profile beats a -c of the same top-level key (Codex's order).
	cfg, err = parseFile(t, "full.toml", LoadOptions{Profile: "fast", Overrides: []string{"model=from-c"}})
	if err != nil || cfg.Model != "gpt-5-mini" {
		t.Fatalf("%v %q", err, cfg.Model)
	}
	// -c can select a profile.
	cfg, err = parseFile(t, "full.toml", LoadOptions{Overrides: []string{"profile=fast"}})
	if err != nil || cfg.Model != "gpt-5-mini" {
		t.Fatalf("%v %q", err, cfg.Model)
	}
}

func TestOverrideErrors(t *testing.T) {
	_, err := parseFile(t, "observed.toml", LoadOptions{Overrides: []string{"model=ok", "sandbox_mode=yolo"}})
	assertError(t, err, "-c sandbox_mode=yolo", 0, "sandbox_mode", `unknown variant "yolo"`)

	_, err = parseFile(t, "observed.toml", LoadOptions{Overrides: []string{"model_providers.mock.request_max_retries=-2"}})
	assertError(t, err, "-c model_providers.mock.request_max_retries=-2", 0, "model_providers.mock.request_max_retries", "non-negative")

	_, err = parseFile(t, "observed.toml", LoadOptions{Overrides: []string{"model.x=1"}})
	if err == nil || !strings.Contains(err.Error(), "model is a string, not a table") {
		t.Fatalf("%v", err)
	}
	_, err = parseFile(t, "observed.toml", LoadOptions{Overrides: []string{"novalue"}})
	if err == nil || !strings.Contains(err.Error(), "expected key=value") {
		t.Fatalf("%v", err)
	}
}
