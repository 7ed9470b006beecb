package core

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/modelclient"
)

// mockHarness runs the core against the mock Responses API over HTTP,
// through modelclient.
func mockHarness(t *testing.T, script string, prov func(*config.Provider)) (*harness, *mockmodel.Server) {
	t.Helper()
	opts := mockmodel.Options{}
	if script != "" {
		s, err := mockmodel.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		opts.Script = s
	}
	srv := mockmodel.New(opts)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	p := config.Provider{
		ID: "mock", Name: "Mock", BaseURL: url, WireAPI: config.WireResponses,
		RequestMaxRetries: 2, StreamMaxRetries: 2, StreamIdleTimeout: 5 * time.Second,
	}
	if prov != nil {
		prov(&p)
	}
	h := newHarness(t, nil, func(c *Config) {
		c.Providers = map[string]*Provider{"mock": ProviderFromConfig(p, modelclient.Options{
			Sleep: func(ctx context.Context, d time.Duration) error { // keep backoffs short
				select {
				case <-time.After(min(d, 50*time.Millisecond)):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			},
		})}
	})
	return h, srv
}

func TestMockModelDefaultTurn(t *testing.T) {
	h, srv := mockHarness(t, "", nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("list the files")})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusCompleted || !strings.Contains(done.LastAgentMessage, "hello from the mock") {
		t.Fatalf("turn %s", describe(evs))
	}
	items := itemsCompleted[*agent.CommandExecution](evs)
	if len(items) != 1 || items[0].Status != agent.ItemStatusCompleted {
		t.Fatalf("items %s", describe(evs))
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := string(reqs[1].Body)
	for _, want := range []string{`"type":"function_call_output"`, `Process exited with code 0`, `"stream":true`, `"store":false`, `"prompt_cache_key":"` + th.ID()} {
		if !strings.Contains(body, want) {
			t.Errorf("second request lacks %s", want)
		}
	}
	if got := reqs[0].Header.Get("Originator"); got != "codexd" {
		t.Errorf("originator %q", got)
	}
}

func TestMockModelRetryAfter(t *testing.T) {
	script := `{"rules":[{"when":{"request":1},"respond":{"status":429,"retryAfterMs":20,"error":{"message":"slow down"}}}]}`
	h, srv := mockHarness(t, script, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("MOCK:hello")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 1 || !errs[0].WillRetry || errs[0].Err.HTTPStatus != 429 || errs[0].Err.Message != "Reconnecting... 1/2" {
		t.Fatalf("errors %+v", errs)
	}
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != mockmodel.HelloText {
		t.Fatalf("turn %s", describe(evs))
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

func TestMockModelServerErrorFailsTheTurn(t *testing.T) {
	h, _ := mockHarness(t, "", func(p *config.Provider) { p.RequestMaxRetries = 0 })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("MOCK:error")})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || done.Error.Info != "internalServerError" || done.Error.HTTPStatus != 500 ||
		done.Error.Message != "We’re currently experiencing high demand, which may cause temporary errors." {
		t.Fatalf("turn %+v", done.Error)
	}
}

func TestMockModelIdleTimeout(t *testing.T) {
	h, srv := mockHarness(t, "", func(p *config.Provider) {
		p.StreamIdleTimeout = 200 * time.Millisecond
		p.StreamMaxRetries = 1
	})
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("MOCK:stall")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 2 || !errs[0].WillRetry || errs[1].WillRetry {
		t.Fatalf("errors %+v", errs)
	}
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || done.Error.Info != "responseStreamDisconnected" || !strings.Contains(done.Error.Message, "idle") {
		t.Fatalf("turn %+v", done.Error)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

func TestMockModelCutStreamIsRetried(t *testing.T) {
	script := `{"rules":[{"when":{"request":1},"respond":{"output":[{"type":"message","text":"partial answer here","deltas":5}],"cutAfter":4}}]}`
	h, _ := mockHarness(t, script, nil)
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("MOCK:hello")})
	evs := until(t, th, isTurnCompleted)
	errs := msgs[agent.Error](evs)
	if len(errs) != 1 || !errs[0].WillRetry || errs[0].Err.Info != "responseStreamDisconnected" {
		t.Fatalf("errors %+v", errs)
	}
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != mockmodel.HelloText {
		t.Fatalf("turn %s", describe(evs))
	}
}

func TestMockModelInterruptDropsTheStream(t *testing.T) {
	h, srv := mockHarness(t, "", nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("MOCK:slow=200")})
	until(t, th, isDelta)
	h.submit(th, agent.Interrupt{TurnID: id})
	evs := until(t, th, isTurnCompleted)
	if evs[len(evs)-1].Msg.(agent.TurnCompleted).Status != agent.TurnStatusInterrupted {
		t.Fatalf("turn %s", describe(evs))
	}
	ex := srv.Requests()[0]
	select {
	case <-ex.Gone():
	case <-time.After(10 * time.Second):
		t.Fatal("the HTTP stream was not dropped")
	}
	if ex.EventsSent() >= 12 {
		t.Fatalf("the whole answer was sent (%d events)", ex.EventsSent())
	}
}

func TestMockModelSteerDropsTheStream(t *testing.T) {
	h, srv := mockHarness(t, "", nil)
	th := h.start(agent.Overrides{})
	id := h.submit(th, agent.UserInput{Input: text("MOCK:slow=200")})
	until(t, th, isDelta)
	h.submit(th, agent.Steer{ExpectedTurnID: id, Input: text("MOCK:hello")})
	evs := until(t, th, isTurnCompleted)
	if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || done.LastAgentMessage != mockmodel.HelloText {
		t.Fatalf("turn %s", describe(evs))
	}
	select {
	case <-srv.Requests()[0].Gone():
	case <-time.After(10 * time.Second):
		t.Fatal("the first stream was not dropped")
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests", n)
	}
}

func TestMockModelMissingKey(t *testing.T) {
	h, srv := mockHarness(t, "", func(p *config.Provider) { p.EnvKey = "CODEXD_CORE_TEST_UNSET_KEY" })
	th := h.start(agent.Overrides{})
	h.submit(th, agent.UserInput{Input: text("hi")})
	evs := until(t, th, isTurnCompleted)
	done := evs[len(evs)-1].Msg.(agent.TurnCompleted)
	if done.Status != agent.TurnStatusFailed || !strings.Contains(done.Error.Message, "CODEXD_CORE_TEST_UNSET_KEY") {
		t.Fatalf("turn %+v", done.Error)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests without a key", n)
	}
}

func TestMockModelToolMarkers(t *testing.T) {
	t.Run("stdin", func(t *testing.T) {
		h, _ := mockHarness(t, "", nil)
		th := h.start(agent.Overrides{})
		h.submit(th, agent.UserInput{Input: text("MOCK:stdin")})
		evs := until(t, th, isTurnCompleted)
		if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted {
			t.Fatalf("turn %s", describe(evs))
		}
	})
	t.Run("patch", func(t *testing.T) {
		h, _ := mockHarness(t, "", nil)
		th := h.start(agent.Overrides{})
		h.submit(th, agent.UserInput{Input: text("MOCK:patch\n*** Begin Patch\n*** Add File: m.txt\n+from the mock\n*** End Patch")})
		evs := until(t, th, isTurnCompleted)
		if fc := itemsCompleted[*agent.FileChange](evs); len(fc) != 1 || fc[0].Status != agent.ItemStatusCompleted {
			t.Fatalf("file change %s", describe(evs))
		}
		if got := readFile(t, h.dir+"/m.txt"); got != "from the mock\n" {
			t.Fatalf("m.txt %q", got)
		}
	})
	t.Run("plan", func(t *testing.T) {
		h, _ := mockHarness(t, "", nil)
		th := h.start(agent.Overrides{})
		h.submit(th, agent.UserInput{Input: text("MOCK:plan")})
		evs := until(t, th, isTurnCompleted)
		if len(msgs[agent.PlanUpdated](evs)) != 1 {
			t.Fatalf("plan %s", describe(evs))
		}
	})
	t.Run("escalate", func(t *testing.T) {
		h, _ := mockHarness(t, "", nil)
		th := h.start(agent.Overrides{Approval: policy(agent.ApprovalOnRequest), Sandbox: sandboxMode(agent.SandboxWorkspaceWrite)})
		h.submit(th, agent.UserInput{Input: text("MOCK:escalate echo escalated")})
		evs := until(t, th, isApproval)
		req := evs[len(evs)-1].Msg.(agent.ExecApprovalRequest)
		if req.Reason == "" {
			t.Fatalf("request %+v", req)
		}
		h.submit(th, agent.ExecDecision{CallID: req.CallID, Decision: agent.Accept})
		evs = until(t, th, isTurnCompleted)
		if done := evs[len(evs)-1].Msg.(agent.TurnCompleted); done.Status != agent.TurnStatusCompleted || !strings.Contains(done.LastAgentMessage, "escalated") {
			t.Fatalf("turn %s", describe(evs))
		}
	})
}
