package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// envTurn loads toml as config.toml, builds the core from it as codexd
// does (ConfigFrom), runs cmd through exec_command and returns what the
// command printed.
func envTurn(t *testing.T, toml, cmd string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{CodexHome: home})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cc, err := ConfigFrom(Setup{
		Config: cfg, Cwd: t.TempDir(), Sandbox: passSandbox{},
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := newFakeModel(
		callResponse("call_1", "exec_command", map[string]any{"cmd": cmd}),
		textResponse("msg_2", "done"),
	)
	cc.Providers[cfg.ModelProvider] = &Provider{Name: cfg.ModelProvider, Client: m, StreamMaxRetries: 1}
	cc.NoLoginShell = true
	c, err := New(cc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Thread.Submit(t.Context(), agent.UserInput{Input: text("env")}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, l.Thread, isTurnCompleted)
	done := itemsCompleted[*agent.CommandExecution](evs)
	if len(done) != 1 || done[0].Output == nil {
		t.Fatalf("no command: %s", describe(evs))
	}
	return *done[0].Output
}

// The provider's credential (a name without KEY, SECRET or TOKEN in it)
// and the variables of its env_http_headers never reach a command, whatever
// shell_environment_policy says. On the main of 2026-12-02 the command
// printed the password.
func TestCommandsNeverSeeProviderCredentials(t *testing.T) {
	t.Setenv("CORP_LLM_PASSWORD", "hunter2-password")
	t.Setenv("CORP_ORG_HEADER", "org-header-value")
	t.Setenv("CODEXD_ENV_CANARY", "canary-value")
	base := `model = "m"
model_provider = "corp"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.corp]
name = "Corp"
base_url = "http://127.0.0.1:9/v1"
env_key = "CORP_LLM_PASSWORD"
env_http_headers = { "X-Org" = "CORP_ORG_HEADER" }
`
	for _, policy := range []string{
		"",
		"[shell_environment_policy]\ninherit = \"all\"\nignore_default_excludes = true\n",
		"[shell_environment_policy]\ninclude_only = [\"CORP_*\", \"CODEXD_*\", \"PATH\"]\n",
	} {
		out := envTurn(t, base+policy, `echo "pw=$CORP_LLM_PASSWORD hdr=$CORP_ORG_HEADER canary=$CODEXD_ENV_CANARY"`)
		if strings.Contains(out, "hunter2") || strings.Contains(out, "org-header-value") {
			t.Errorf("policy %q: a credential reached the command: %q", policy, out)
		}
		if !strings.Contains(out, "canary=canary-value") {
			t.Errorf("policy %q: an ordinary variable did not: %q", policy, out)
		}
	}
}

// shell_environment_policy reaches the commands: the rules apply in
// Codex's order, and CODEX_THREAD_ID and the unified-exec variables are
// set after them.
func TestCommandsFollowShellEnvironmentPolicy(t *testing.T) {
	t.Setenv("CODEXD_ENV_CANARY", "canary-value")
	t.Setenv("CODEXD_TEST_API_KEY", "key-value")
	base := `model = "m"
model_provider = "corp"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.corp]
name = "Corp"
base_url = "http://127.0.0.1:9/v1"
`
	cmd := `echo "canary=$CODEXD_ENV_CANARY key=$CODEXD_TEST_API_KEY home=$HOME set=$SET_BY_POLICY thread=${CODEX_THREAD_ID:+yes} pager=$PAGER"`
	for _, c := range []struct{ policy, want string }{
		{"", "canary=canary-value key= home=" + os.Getenv("HOME") + " set= thread=yes pager=cat"},
		{"[shell_environment_policy]\nignore_default_excludes = true\n", "canary=canary-value key=key-value home=" + os.Getenv("HOME") + " set= thread=yes pager=cat"},
		{"[shell_environment_policy]\ninherit = \"core\"\nset = { SET_BY_POLICY = \"1\" }\n", "canary= key= home=" + os.Getenv("HOME") + " set=1 thread=yes pager=cat"},
		{"[shell_environment_policy]\ninherit = \"none\"\nexclude = [\"codexd_*\"]\nset = { SET_BY_POLICY = \"1\", CODEXD_X = \"2\" }\ninclude_only = [\"set_*\"]\n", "canary= key= home= set=1 thread=yes pager=cat"},
	} {
		if out := envTurn(t, base+c.policy, cmd); strings.TrimSpace(out) != c.want {
			t.Errorf("policy %q: got %q, want %q", c.policy, out, c.want)
		}
	}
}
