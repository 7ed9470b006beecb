package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, opts LoadOptions) *Config {
	t.Helper()
	opts.Getenv = func(string) string { return "" }
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestProfileFileIsLayered(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, FileName), "model = \"base\"\nsandbox_mode = \"read-only\"\n[profiles.old]\nmodel = \"table\"\n")
	write(t, filepath.Join(home, "fast.config.toml"), "model = \"file\"\nmodel_context_window = 1000\n")
	c := load(t, LoadOptions{CodexHome: home, Profile: "fast"})
	if c.Model != "file" || c.Profile != "fast" || c.SandboxMode != SandboxReadOnly || c.Raw["model_context_window"] != int64(1000) {
		t.Fatalf("--profile fast: model %q profile %q sandbox %q raw %v", c.Model, c.Profile, c.SandboxMode, c.Raw["model_context_window"])
	}
	// -c wins over the profile file.
	if c := load(t, LoadOptions{CodexHome: home, Profile: "fast", Overrides: []string{`model="cli"`}}); c.Model != "cli" {
		t.Fatalf("-c under a profile: %q", c.Model)
	}
	// The older table still works when there is no file.
	if c := load(t, LoadOptions{CodexHome: home, Profile: "old"}); c.Model != "table" {
		t.Fatalf("[profiles.old]: %q", c.Model)
	}
	// profile = "NAME" selects the file too.
	write(t, filepath.Join(home, FileName), "profile = \"fast\"\nmodel = \"base\"\n")
	if c := load(t, LoadOptions{CodexHome: home}); c.Model != "file" || c.Profile != "fast" {
		t.Fatalf("profile key: %q %q", c.Model, c.Profile)
	}
	if _, err := Load(LoadOptions{CodexHome: home, Profile: "nope", Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), `"nope" not found`) {
		t.Fatalf("missing profile: %v", err)
	}
	write(t, filepath.Join(home, "bad.config.toml"), "model = \n")
	if _, err := Load(LoadOptions{CodexHome: home, Profile: "bad", Getenv: func(string) string { return "" }}); err == nil || !strings.Contains(err.Error(), "bad.config.toml") {
		t.Fatalf("bad profile file: %v", err)
	}
}

func TestTrustedProjectConfigIsLayered(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	sub := filepath.Join(proj, "pkg")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	write(t, filepath.Join(proj, ProjectConfigPath), "model = \"project\"\napproval_policy = \"never\"\n[projects.\"/\"]\ntrust_level = \"trusted\"\n")
	write(t, filepath.Join(sub, ProjectConfigPath), "model = \"sub\"\n")
	write(t, filepath.Join(home, FileName), "model = \"base\"\n")
	if c := load(t, LoadOptions{CodexHome: home, Cwd: sub}); c.Model != "base" {
		t.Fatalf("untrusted project layered: %q", c.Model)
	}
	write(t, filepath.Join(home, FileName), "model = \"base\"\n[projects.\""+proj+"\"]\ntrust_level = \"trusted\"\n")
	c := load(t, LoadOptions{CodexHome: home, Cwd: sub})
	if c.Model != "sub" || c.ApprovalPolicy != ApprovalNever {
		t.Fatalf("trusted project: model %q approval %q", c.Model, c.ApprovalPolicy)
	}
	if p, _ := c.Raw["projects"].(map[string]any); p["/"] != nil {
		t.Fatal("a project's config trusted a directory")
	}
	// A CLI flag still wins.
	if c := load(t, LoadOptions{CodexHome: home, Cwd: sub, Model: "flag"}); c.Model != "flag" {
		t.Fatalf("flag: %q", c.Model)
	}
}

func TestUnimplementedKeysWarnOnce(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, FileName), "service_tier = \"flex\"\nhistory = { persistence = \"none\" }\n[tui]\nx = 1\n[profiles.p]\nservice_tier = \"fast\"\nzsh_path = \"/bin/zsh\"\n")
	c := load(t, LoadOptions{CodexHome: home, Profile: "p"})
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.Summary)
	}
	want := "codexd ignores config key `history`|codexd ignores config key `zsh_path`"
	if strings.Join(got, "|") != want {
		t.Fatalf("warnings %q", got)
	}
	// service_tier is read (the profile's wins), as Codex 0.169 reads it.
	if c.ServiceTier != "fast" {
		t.Fatalf("service_tier %q", c.ServiceTier)
	}
}

// An [otel] table that exports nowhere asks for nothing codexd would do,
// so it is no cause for a warning (the differential test's config has
// one, and Codex says nothing of it); one that exports somewhere is.
func TestInertOtelDoesNotWarn(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, FileName), "[otel]\nexporter = \"none\"\n")
	if c := load(t, LoadOptions{CodexHome: home}); len(c.Warnings) != 0 {
		t.Fatalf("warnings %+v", c.Warnings)
	}
	write(t, filepath.Join(home, FileName), "[otel]\nexporter = { otlp-http = { endpoint = \"http://x\" } }\n")
	if c := load(t, LoadOptions{CodexHome: home}); len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Summary, "`otel`") {
		t.Fatalf("warnings %+v", c.Warnings)
	}
}
