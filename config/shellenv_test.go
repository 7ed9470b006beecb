package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/codexd/codexd/execenv"
)

func TestShellEnvironmentPolicy(t *testing.T) {
	cases := []struct {
		name      string
		toml      string
		overrides []string
		want      execenv.Policy
	}{
		{"absent", "", nil, execenv.Policy{}},
		{"empty table", "[shell_environment_policy]\n", nil, execenv.Policy{Inherit: execenv.InheritAll}},
		{"every key", `[shell_environment_policy]
inherit = "core"
ignore_default_excludes = true
exclude = ["AWS_*", "*_PASSWORD"]
set = { CI = "1", PATH = "/bin" }
include_only = ["PATH", "HOME", "CI"]
experimental_use_profile = true
`, nil, execenv.Policy{
			Inherit: execenv.InheritCore, IgnoreDefaultExcludes: true, Exclude: []string{"AWS_*", "*_PASSWORD"},
			Set: map[string]string{"CI": "1", "PATH": "/bin"}, IncludeOnly: []string{"PATH", "HOME", "CI"}}},
		{"-c overrides", "[shell_environment_policy]\ninherit = \"none\"\n",
			[]string{"shell_environment_policy.inherit=core", `shell_environment_policy.exclude=["X"]`},
			execenv.Policy{Inherit: execenv.InheritCore, Exclude: []string{"X"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.toml), "config.toml", LoadOptions{Overrides: c.overrides, Getenv: env(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.ShellEnvironment, c.want) {
				t.Fatalf("got  %+v\nwant %+v", cfg.ShellEnvironment, c.want)
			}
		})
	}
}

func TestShellEnvironmentPolicyErrors(t *testing.T) {
	for _, c := range []struct{ toml, key, msg string }{
		{"[shell_environment_policy]\ninherit = \"some\"\n", "shell_environment_policy.inherit", `unknown variant "some"`},
		{"[shell_environment_policy]\nexclude = \"X\"\n", "shell_environment_policy.exclude", "incompatible types"},
		{"[shell_environment_policy]\nset = { A = 1 }\n", "shell_environment_policy.set.A", "incompatible types"},
		{"[shell_environment_policy]\nignore_default_excludes = \"yes\"\n", "shell_environment_policy.ignore_default_excludes", "incompatible types"},
	} {
		_, err := Parse([]byte(c.toml), "config.toml", LoadOptions{Getenv: env(nil)})
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 2 || ce.Key != c.key || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%q: %#v", c.toml, err)
		}
	}
}
