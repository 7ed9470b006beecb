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
	"github.com/codexd/codexd/mockmodel"
)

func TestConfigFromConfigToml(t *testing.T) {
	mock := mockmodel.New(mockmodel.Options{})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()
	home := t.TempDir()
	toml := `model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
developer_instructions = "Answer in French."
service_tier = "flex"
[model_providers.mock]
name = "Mock"
base_url = "` + url + `"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
[features]
plugins = false
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o644); err != nil {
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
		Config: cfg, Cwd: t.TempDir(),
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := cc.Settings
	if s.Model != "mock-model" || s.ModelProvider != "mock" || s.Approval != agent.ApprovalNever || s.Sandbox.Mode != agent.SandboxDangerFullAccess {
		t.Fatalf("settings %+v", s)
	}
	c, err := New(cc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Thread.Submit(t.Context(), agent.UserInput{Input: text("MOCK:hello")}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, l.Thread, isTurnCompleted)
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != mockmodel.HelloText {
		t.Fatalf("turn %s", describe(evs))
	}
	body := string(mock.Requests()[0].Body)
	if !strings.Contains(body, "Answer in French.") {
		t.Fatal("developer instructions not sent")
	}
	// service_tier is the thread's default tier, sent with each request
	// (Codex 0.169, side by side).
	if s.ServiceTier != "flex" {
		t.Fatalf("service tier %q", s.ServiceTier)
	}
	if !strings.Contains(body, `"service_tier":"flex"`) {
		t.Fatal("service_tier not sent")
	}
}
