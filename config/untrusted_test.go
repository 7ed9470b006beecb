package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Codex 0.169 will not start (exit 1, `Error: approval_policy =
// "untrusted" is no longer supported; remove this setting`) when its
// configuration sets that policy: in config.toml, in a profile's file or
// with -c. Its command-line flag still takes it.
func TestUntrustedApprovalPolicyIsRefused(t *testing.T) {
	const msg = `approval_policy = "untrusted" is no longer supported; remove this setting`
	home := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(home, FileName)
	cases := []struct {
		name, config string
		opts         LoadOptions
		file         string
	}{
		{"config.toml", `approval_policy = "untrusted"` + "\n", LoadOptions{}, cfgPath},
		{"override", `approval_policy = "never"` + "\n",
			LoadOptions{Overrides: []string{"approval_policy=untrusted", "model=m"}}, "-c approval_policy=untrusted"},
		{"quoted override", "", LoadOptions{Overrides: []string{`approval_policy="untrusted"`}}, `-c approval_policy="untrusted"`},
		{"profile file", `approval_policy = "never"` + "\n", LoadOptions{Profile: "p"}, cfgPath},
	}
	write("p.config.toml", `approval_policy = "untrusted"`+"\n")
	for _, tc := range cases {
		write(FileName, tc.config)
		tc.opts.CodexHome, tc.opts.Getenv = home, env(nil)
		_, err := Load(tc.opts)
		var ce *Error
		if !errors.As(err, &ce) || ce.Msg != msg || ce.File != tc.file || ce.Key != "" {
			t.Errorf("%s: Load = %#v (%v); want %q from %s", tc.name, err, err, msg, tc.file)
		}
	}

	// Overridden by -c, by the flag, or set only in an unselected legacy
	// profile, the file's value is not read.
	write(FileName, `approval_policy = "untrusted"`+"\n[profiles.q]\napproval_policy = \"untrusted\"\n")
	if _, err := Load(LoadOptions{CodexHome: home, Getenv: env(nil), Overrides: []string{"approval_policy=never"}}); err != nil {
		t.Errorf("-c approval_policy=never over the file: %v", err)
	}
	write(FileName, `approval_policy = "never"`+"\n[profiles.q]\napproval_policy = \"untrusted\"\n")
	cfg, err := Load(LoadOptions{CodexHome: home, Getenv: env(nil), ApprovalPolicy: ApprovalUntrusted})
	if err != nil || cfg.ApprovalPolicy != ApprovalUntrusted {
		t.Errorf("the flag's untrusted: %v, %+v", err, cfg)
	}
}
