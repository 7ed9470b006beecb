package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func parseFile(t *testing.T, name string, opts LoadOptions) (*Config, error) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Getenv == nil {
		opts.Getenv = env(nil)
	}
	return Parse(data, name, opts)
}

func TestObservedConfigLoadsUnchanged(t *testing.T) {
	cfg, err := parseFile(t, "observed.toml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "mock-model" || cfg.ModelProvider != "mock" {
		t.Fatalf("model %q provider %q", cfg.Model, cfg.ModelProvider)
	}
	if cfg.ApprovalPolicy != ApprovalNever || cfg.SandboxMode != SandboxWorkspaceWrite {
		t.Fatalf("approval %q sandbox %q", cfg.ApprovalPolicy, cfg.SandboxMode)
	}
	want := Provider{
		ID: "mock", Builtin: "", Name: "Mock Responses",
		BaseURL: "http://127.0.0.1:18201/v1", WireAPI: WireResponses,
		EnvKey:            "MOCK_API_KEY",
		RequestMaxRetries: 0, StreamMaxRetries: 0,
		StreamIdleTimeout: 60 * time.Second,
	}
	if !reflect.DeepEqual(cfg.Provider, want) {
		t.Fatalf("provider\n got %+v\nwant %+v", cfg.Provider, want)
	}
	// Unknown tables are kept in Raw, untouched.
	if f, ok := cfg.Raw["features"].(map[string]any); !ok || f["plugins"] != false {
		t.Fatalf("raw features: %#v", cfg.Raw["features"])
	}
}

func TestFullConfig(t *testing.T) {
	cfg, err := parseFile(t, "full.toml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "gpt-5-codex" || cfg.ReasoningEffort != "high" || cfg.ReasoningSummary != "detailed" || cfg.Verbosity != "low" {
		t.Fatalf("model settings: %+v", cfg)
	}
	if cfg.DeveloperInstructions != "Be terse." || cfg.ProjectDocMaxBytes != 65536 ||
		!reflect.DeepEqual(cfg.ProjectDocFallbackFilenames, []string{"CLAUDE.md"}) {
		t.Fatalf("instructions/doc settings: %+v", cfg)
	}
	wantSWW := WorkspaceWrite{WritableRoots: []string{"/srv/data", "/var/tmp/build"}, NetworkAccess: true, ExcludeTmpdirEnvVar: true}
	if !reflect.DeepEqual(cfg.SandboxWorkspaceWrite, wantSWW) {
		t.Fatalf("sandbox_workspace_write %+v", cfg.SandboxWorkspaceWrite)
	}
	p := cfg.Provider
	if p.ID != "local" || p.Builtin != "" || p.BaseURL != "http://127.0.0.1:8000/v1" || p.EnvKey != "LOCAL_KEY" ||
		p.EnvKeyInstructions != "any value works" ||
		!reflect.DeepEqual(p.HTTPHeaders, map[string]string{"X-Team": "agents"}) ||
		!reflect.DeepEqual(p.EnvHTTPHeaders, map[string]string{"X-Trace": "TRACE_ID"}) ||
		!reflect.DeepEqual(p.QueryParams, map[string]string{"api-version": "2025-04-01-preview"}) {
		t.Fatalf("provider %+v", p)
	}
	if p.RequestMaxRetries != 7 || p.StreamMaxRetries != 100 || p.StreamIdleTimeout != 1500*time.Millisecond {
		t.Fatalf("retries %d/%d (stream capped at 100), idle %v", p.RequestMaxRetries, p.StreamMaxRetries, p.StreamIdleTimeout)
	}
	// Built-in ids are not redefinable, as in Codex.
	if got := cfg.Providers["openai"].BaseURL; got != DefaultOpenAIBaseURL {
		t.Fatalf("openai base_url redefined to %q", got)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse(nil, "", LoadOptions{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ModelProvider != "openai" || cfg.ApprovalPolicy != ApprovalOnRequest || cfg.SandboxMode != SandboxReadOnly ||
		cfg.ReasoningSummary != "" || cfg.ProjectDocMaxBytes != 32768 || cfg.Model != "" {
		t.Fatalf("defaults: %+v", cfg)
	}
	p := cfg.Provider
	if p.Builtin != BuiltinOpenAI || p.BaseURL != "https://api.openai.com/v1" || p.EnvKey != "OPENAI_API_KEY" ||
		p.RequestMaxRetries != 4 || p.StreamMaxRetries != 5 || p.StreamIdleTimeout != 300*time.Second || p.WireAPI != WireResponses {
		t.Fatalf("openai provider: %+v", p)
	}
	for id, port := range map[string]string{"ollama": "11434", "lmstudio": "1234"} {
		if got := cfg.Providers[id].BaseURL; got != "http://localhost:"+port+"/v1" {
			t.Errorf("%s base_url %q", id, got)
		}
	}
	m := cfg.Providers["mock"]
	if m.Builtin != BuiltinMock || m.BaseURL != "" || m.EnvKey != "" {
		t.Fatalf("mock provider: %+v", m)
	}
}

func TestOSSEnvAndOpenAIBaseURL(t *testing.T) {
	cfg, err := Parse([]byte(`openai_base_url = "http://proxy/v1"`), "", LoadOptions{
		Getenv: env(map[string]string{"CODEX_OSS_PORT": "9999"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Providers["ollama"].BaseURL; got != "http://localhost:9999/v1" {
		t.Fatalf("ollama %q", got)
	}
	if got := cfg.Provider.BaseURL; got != "http://proxy/v1" {
		t.Fatalf("openai %q", got)
	}
	cfg, err = Parse(nil, "", LoadOptions{Getenv: env(map[string]string{"CODEX_OSS_BASE_URL": "http://gpu:1/v1"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Providers["lmstudio"].BaseURL; got != "http://gpu:1/v1" {
		t.Fatalf("lmstudio %q", got)
	}
}

func TestMockProviderAdjustedNotReplaced(t *testing.T) {
	cfg, err := Parse([]byte("model_provider = \"mock\"\n[model_providers.mock]\nrequest_max_retries = 0\n"), "", LoadOptions{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider.Builtin != BuiltinMock || cfg.Provider.RequestMaxRetries != 0 || cfg.Provider.StreamMaxRetries != 5 {
		t.Fatalf("mock: %+v", cfg.Provider)
	}
}

func TestProfiles(t *testing.T) {
	cfg, err := parseFile(t, "full.toml", LoadOptions{Profile: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Profile != "fast" || cfg.Model != "gpt-5-mini" || cfg.ReasoningEffort != "low" ||
		cfg.ApprovalPolicy != ApprovalNever || cfg.SandboxMode != SandboxReadOnly ||
		cfg.ModelProvider != "local" || cfg.ReasoningSummary != "detailed" {
		t.Fatalf("profile fast: %+v", cfg)
	}
	cfg, err = parseFile(t, "full.toml", LoadOptions{Profile: "offline"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider.Builtin != BuiltinMock {
		t.Fatalf("profile offline provider %+v", cfg.Provider)
	}
	// The file's own `profile` key selects too; an explicit option wins.
	cfg, err = Parse([]byte("profile = \"a\"\n[profiles.a]\nmodel = \"A\"\n[profiles.b]\nmodel = \"B\"\n"), "", LoadOptions{Getenv: env(nil)})
	if err != nil || cfg.Model != "A" {
		t.Fatalf("profile key: %v %+v", err, cfg)
	}
	cfg, err = Parse([]byte("profile = \"a\"\n[profiles.a]\nmodel = \"A\"\n[profiles.b]\nmodel = \"B\"\n"), "", LoadOptions{Getenv: env(nil), Profile: "b"})
	if err != nil || cfg.Model != "B" {
		t.Fatalf("profile option: %v %+v", err, cfg)
	}
	_, err = parseFile(t, "full.toml", LoadOptions{Profile: "nope"})
	assertError(t, err, "full.toml", 0, "profile", `config profile "nope" not found`)
}

func TestExplicitOptionsWinOverProfile(t *testing.T) {
	cfg, err := parseFile(t, "full.toml", LoadOptions{
		Profile: "fast", Model: "flag-model", ModelProvider: "mock",
		ApprovalPolicy: ApprovalUntrusted, SandboxMode: SandboxDangerFullAccess,
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "flag-model" || cfg.ModelProvider != "mock" || cfg.ApprovalPolicy != ApprovalUntrusted || cfg.SandboxMode != SandboxDangerFullAccess {
		t.Fatalf("%+v", cfg)
	}
	_, err = Parse(nil, "", LoadOptions{Getenv: env(nil), SandboxMode: "yolo"})
	if err == nil || !strings.Contains(err.Error(), `unknown variant "yolo"`) {
		t.Fatalf("bad option: %v", err)
	}
}

func TestGranularApproval(t *testing.T) {
	cfg, err := Parse([]byte("[approval_policy.granular]\nrules = true\nsandbox_approval = false\nmcp_elicitations = true\n"), "", LoadOptions{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ApprovalPolicy != ApprovalGranular || cfg.GranularApproval["sandbox_approval"] != false {
		t.Fatalf("%q %#v", cfg.ApprovalPolicy, cfg.GranularApproval)
	}
}

func assertError(t *testing.T, err error, file string, line int, key, msgPart string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want *config.Error", err, err)
	}
	if ce.File != file || ce.Line != line || ce.Key != key || !strings.Contains(ce.Msg, msgPart) {
		t.Fatalf("error %+v\nwant file %q line %d key %q msg containing %q", ce, file, line, key, msgPart)
	}
}

func TestErrorsNameFileLineAndKey(t *testing.T) {
	cases := []struct {
		name, toml string
		line       int
		key, msg   string
	}{
		{"string as int", "model = 5\n", 1, "model", "incompatible types"},
		{"provider field", "model = \"x\"\n\n[model_providers.a]\nname = 1\n", 4, "model_providers.a.name", "incompatible types"},
		{"retries string", "[model_providers.a]\nrequest_max_retries = \"3\"\n", 2, "model_providers.a.request_max_retries", "expected a non-negative integer"},
		{"negative retries", "[model_providers.a]\nstream_max_retries = -1\n", 2, "model_providers.a.stream_max_retries", "non-negative"},
		{"wire_api chat", "[model_providers.a]\nwire_api = \"chat\"\n", 2, "model_providers.a.wire_api", "no longer supported"},
		{"wire_api other", "[model_providers.a]\nwire_api = \"completions\"\n", 2, "model_providers.a.wire_api", `wire_api "completions" is not supported`},
		{"approval", "\n\napproval_policy = \"sometimes\"\n", 3, "approval_policy", `unknown variant "sometimes"`},
		{"approval int", "approval_policy = 1\n", 1, "approval_policy", "expected a string"},
		{"sandbox", "sandbox_mode = \"yolo\"\n", 1, "sandbox_mode", `unknown variant "yolo"`},
		{"summary", "model_reasoning_summary = \"short\"\n", 1, "model_reasoning_summary", "unknown variant"},
		{"verbosity in profile", "[profiles.p]\nmodel_verbosity = \"loud\"\n", 2, "profiles.p.model_verbosity", "unknown variant"},
		{"writable_roots", "[sandbox_workspace_write]\nwritable_roots = \"/x\"\n", 2, "sandbox_workspace_write.writable_roots", "incompatible types"},
		{"headers", "[model_providers.a]\nhttp_headers = { X = 1 }\n", 2, "model_providers.a.http_headers.X", "incompatible types"},
		{"syntax", "model = \n", 1, "model", "expected value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.toml), "/home/u/.codex/config.toml", LoadOptions{Getenv: env(nil)})
			assertError(t, err, "/home/u/.codex/config.toml", c.line, c.key, c.msg)
			if !strings.HasPrefix(err.Error(), "/home/u/.codex/config.toml:") {
				t.Fatalf("message %q does not start with the file", err)
			}
		})
	}
}

func TestUnknownProvider(t *testing.T) {
	_, err := Parse([]byte("model_provider = \"azure\"\n"), "c.toml", LoadOptions{Getenv: env(nil)})
	assertError(t, err, "c.toml", 0, "model_provider", `model provider "azure" not found; known providers: lmstudio, mock, ollama, openai`)
	_, err = Parse([]byte("model_provider = \"amazon-bedrock\"\n"), "c.toml", LoadOptions{Getenv: env(nil)})
	assertError(t, err, "c.toml", 0, "model_provider", "not supported by codexd")
}

func TestLoadAndHome(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("model = \"m\"\nmodel_instructions_file = \"inst.md\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Getenv: env(map[string]string{"CODEX_HOME": home})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CodexHome != home || cfg.File != filepath.Join(home, FileName) || cfg.Model != "m" ||
		cfg.ModelInstructionsFile != filepath.Join(home, "inst.md") {
		t.Fatalf("%+v", cfg)
	}

	// No config file: defaults.
	empty := t.TempDir()
	cfg, err = Load(LoadOptions{CodexHome: empty, Getenv: env(nil)})
	if err != nil || cfg.File != "" || cfg.ModelProvider != "openai" {
		t.Fatalf("no file: %v %+v", err, cfg)
	}

	// CODEX_HOME must exist; without it, ~/.codex.
	if _, err := Home(env(map[string]string{"CODEX_HOME": filepath.Join(empty, "missing")})); err == nil {
		t.Fatal("missing CODEX_HOME accepted")
	}
	h, err := Home(env(map[string]string{"HOME": "/home/u"}))
	if err != nil || h != "/home/u/.codex" {
		t.Fatalf("home %q %v", h, err)
	}

	// A file that cannot be read is an error, not defaults.
	if err := os.Mkdir(filepath.Join(empty, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(empty, "sub", FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(LoadOptions{CodexHome: filepath.Join(empty, "sub"), Getenv: env(nil)}); err == nil {
		t.Fatal("config.toml that is a directory accepted")
	}
}

// TestAllowLoginShell: allow_login_shell = false makes commands run with
// `bash -c`, as in Codex; codexd ignored the key and ran `bash -lc`.
func TestAllowLoginShell(t *testing.T) {
	for src, want := range map[string]bool{"": false, "allow_login_shell = true\n": false, "allow_login_shell = false\n": true} {
		cfg, err := Parse([]byte(src), "config.toml", LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.NoLoginShell != want {
			t.Errorf("%q: NoLoginShell %v, want %v", src, cfg.NoLoginShell, want)
		}
	}
}

// TestNotifyKey: notify is read (a program and its arguments) and draws no
// configWarning; codexd ignored it with one.
func TestNotifyKey(t *testing.T) {
	cfg, err := Parse([]byte("notify = [\"notify-send\", \"codex\"]\n"), "config.toml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Notify, []string{"notify-send", "codex"}) || len(cfg.Warnings) != 0 {
		t.Fatalf("notify %q, warnings %+v", cfg.Notify, cfg.Warnings)
	}
}
