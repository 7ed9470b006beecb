package appserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/jsonrpc"
)

// The `config` member of thread/resume and thread/fork, as Codex 0.169
// applies it (checked side by side by the differential session
// thread-config): Codex's config keys over the configuration, under the
// request's own members; a loaded thread's resume ignores it (all but its
// shape); a resume whose config names the model, the provider or the
// effort takes all three from the configuration; a wrongly typed value or
// an unknown provider is refused before anything loads.
func TestThreadConfigOverrides(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	first := newRealEnv(t, home, cwd)
	c := first.dial("before")
	c.initialize(nil)
	ids := map[string]string{}
	for _, name := range []string{"loaded", "effort", "provider", "model", "bad"} {
		id := c.startThread(map[string]any{})
		c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("MOCK:hello " + name), "effort": "high"})
		c.next("turn/completed of "+name, func(m *wmsg) bool {
			return m.Method == "turn/completed" && strings.Contains(string(m.Params), id)
		})
		ids[name] = id
	}

	answer := func(c *jclient, method string, params map[string]any) appproto.ThreadStartResponse {
		t.Helper()
		m := c.call(method, params)
		var r appproto.ThreadStartResponse
		if err := pointer(m.Result, "", &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	refused := func(c *jclient, method string, params map[string]any, msg, data string) {
		t.Helper()
		e := c.callErr(method, params)
		if e.Code != -32600 || e.Message != msg || string(e.Data) != data {
			t.Fatalf("%s %v: %d %q data %s\nwant -32600 %q data %s", method, params, e.Code, e.Message, e.Data, msg, data)
		}
	}
	check := func(what string, r appproto.ThreadStartResponse, model, provider string, effort *string, sandbox string) {
		t.Helper()
		if r.Model != model || r.ModelProvider != provider || deref(r.ReasoningEffort) != deref(effort) || r.Sandbox.Type != sandbox {
			t.Fatalf("%s: model %q provider %q effort %v sandbox %s; want %q %q %v %s", what, r.Model, r.ModelProvider,
				r.ReasoningEffort, r.Sandbox.Type, model, provider, effort, sandbox)
		}
	}
	high, low := ptr("high"), ptr("low")

	// A loaded thread: the config is not applied, nor checked; only its
	// shape is.
	loaded := ids["loaded"]
	check("loaded resume", answer(c, appproto.MethodThreadResume, map[string]any{"threadId": loaded,
		"config": map[string]any{"model": "other-model", "model_reasoning_effort": "low", "sandbox_mode": "workspace-write"}}),
		"mock-model", "mock", high, "readOnly")
	check("loaded resume, bad config", answer(c, appproto.MethodThreadResume, map[string]any{"threadId": loaded,
		"config": map[string]any{"model": 5}}), "mock-model", "mock", high, "readOnly")
	refused(c, appproto.MethodThreadResume, map[string]any{"threadId": loaded, "config": "x"},
		`Invalid request: invalid type: string "x", expected a map`, "")

	// Forks: the config over the configuration, the request's members over it.
	check("fork", answer(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded,
		"config": map[string]any{"model": "other-model", "model_reasoning_effort": "low", "sandbox_mode": "workspace-write"}}),
		"other-model", "mock", low, "workspaceWrite")
	check("fork, dotted and nested", answer(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded, "model": "mock-model",
		"config": map[string]any{"model": "other-model", "model_provider": "other", "features": map[string]any{"x": true}}}),
		"mock-model", "other", nil, "readOnly")
	refused(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded, "config": map[string]any{"model": 5}},
		"failed to load configuration: invalid type: integer `5`, expected a string\nin `model`\n", "")
	refused(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded, "config": map[string]any{"sandbox_mode": "bogus"}},
		"failed to load configuration: unknown variant `bogus`, expected one of `read-only`, `workspace-write`, `danger-full-access`\nin `sandbox_mode`\n", "")
	refused(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded, "config": map[string]any{"model_provider": "nope"}},
		"failed to load configuration: Model provider `nope` not found", "")
	refused(c, appproto.MethodThreadFork, map[string]any{"threadId": loaded, "config": map[string]any{"approval_policy": "untrusted"}},
		`failed to load configuration: approval_policy = "untrusted" is no longer supported; remove this setting`, "")
	c.conn.Close()
	first.close()

	// Unloaded threads.
	second := newRealEnv(t, home, cwd)
	d := second.dial("after")
	d.initialize(nil)
	check("resume, config effort", answer(d, appproto.MethodThreadResume, map[string]any{"threadId": ids["effort"],
		"config": map[string]any{"model_reasoning_effort": "low"}}), "mock-model", "mock", low, "readOnly")
	check("resume, config provider", answer(d, appproto.MethodThreadResume, map[string]any{"threadId": ids["provider"],
		"config": map[string]any{"model_provider": "mock"}}), "mock-model", "mock", nil, "readOnly")
	check("resume, config model", answer(d, appproto.MethodThreadResume, map[string]any{"threadId": ids["model"],
		"config": map[string]any{"model": "other-model", "sandbox_mode": "workspace-write", "approval_policy": "untrusted"}}),
		"other-model", "mock", nil, "workspaceWrite")
	bad := ids["bad"]
	refused(d, appproto.MethodThreadResume, map[string]any{"threadId": bad, "config": map[string]any{"model": 5}},
		"failed to load configuration: invalid type: integer `5`, expected a string\nin `model`\n", "")
	refused(d, appproto.MethodThreadResume, map[string]any{"threadId": bad, "config": map[string]any{"model_provider": "nope"}},
		"This chat uses model provider \u201cnope\u201d, which is no longer configured. Restore this provider\u2019s configuration to continue.",
		`{"modelProvider":"nope","type":"modelProviderNotConfigured"}`)
	refused(d, appproto.MethodThreadResume, map[string]any{"threadId": "01a23ab1-0000-7000-8000-000000000000", "config": map[string]any{"model": 5}},
		"no rollout found for thread id 01a23ab1-0000-7000-8000-000000000000", "")
	// Refused before anything loaded: the thread is not loaded, and
	// resumes with what it recorded.
	check("resume after refusals", answer(d, appproto.MethodThreadResume, map[string]any{"threadId": bad}),
		"mock-model", "mock", high, "readOnly")
}

// A loaded thread nobody is subscribed to, with nothing running, is only a
// cache entry for Codex 0.169: a resume that asks for anything else (its
// config included) shuts it down and loads it afresh with that, with
// notLoaded then idle to every connection; one with a subscriber ignores
// the request's settings.
func TestResumeOfUnsubscribedThreadReloads(t *testing.T) {
	e := newRealEnv(t, t.TempDir(), t.TempDir())
	c := e.dial("a")
	c.initialize(nil)
	other := e.dial("b")
	other.initialize(nil)
	id := c.startThread(map[string]any{})
	c.call(appproto.MethodTurnStart, map[string]any{"threadId": id, "input": text("MOCK:hello"), "effort": "high"})
	c.next("turn/completed", func(m *wmsg) bool { return m.Method == "turn/completed" })

	resume := func(c *jclient, params map[string]any) appproto.ThreadStartResponse {
		t.Helper()
		params["threadId"] = id
		var r appproto.ThreadStartResponse
		if err := pointer(c.call(appproto.MethodThreadResume, params).Result, "", &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	statuses := func(c *jclient) []string {
		t.Helper()
		c.barrier()
		var out []string
		for _, m := range c.logged() {
			if m.Method == "thread/status/changed" {
				var n appproto.ThreadStatusChangedNotification
				if err := m.param("", &n); err != nil {
					t.Fatal(err)
				}
				out = append(out, n.Status.Type)
			}
		}
		return out
	}
	unsubscribe := func(c *jclient) {
		t.Helper()
		c.call("thread/unsubscribe", map[string]any{"threadId": id})
	}

	// The same settings: the loaded thread answers.
	unsubscribe(c)
	before := len(statuses(other))
	if r := resume(c, map[string]any{"model": "mock-model", "sandbox": "read-only"}); r.Model != "mock-model" || deref(r.ReasoningEffort) != "high" {
		t.Fatalf("resume with the same settings: model %q effort %v", r.Model, r.ReasoningEffort)
	}
	if got := statuses(other)[before:]; len(got) != 0 {
		t.Fatalf("resume with the same settings: statuses %v, want none", got)
	}

	// A config: loaded afresh with it.
	unsubscribe(c)
	if r := resume(c, map[string]any{"config": map[string]any{"model": "other-model"}}); r.Model != "other-model" || r.ReasoningEffort != nil {
		t.Fatalf("resume of a cached thread with a config: model %q effort %v; want other-model, none", r.Model, r.ReasoningEffort)
	}
	if got := statuses(other)[before:]; strings.Join(got, " ") != "notLoaded idle" {
		t.Fatalf("resume of a cached thread: statuses %v, want notLoaded idle", got)
	}
	c.next("the warning of a cached thread resumed with another model", func(m *wmsg) bool {
		return m.Method == "warning" && strings.Contains(string(m.Params), "recorded with model `mock-model` but is resuming with `other-model`")
	})

	// Subscribed elsewhere: the request's settings are not applied.
	resume(other, map[string]any{})
	unsubscribe(c)
	if r := resume(c, map[string]any{"model": "mock-model", "config": map[string]any{"model_reasoning_effort": "low"}}); r.Model != "other-model" || r.ReasoningEffort != nil {
		t.Fatalf("resume of a thread subscribed elsewhere: model %q effort %v; want other-model, none", r.Model, r.ReasoningEffort)
	}
}

// The keys of a thread/start config Codex 0.169 treats apart: a granular
// approval_policy table, a [sandbox_workspace_write] table (for a
// workspace-write thread only), the legacy profile key, an empty model, a
// [features] that is not a table, and approval_policy tables that are not
// one of its variants.
func TestThreadStartConfigTables(t *testing.T) {
	e := newRealEnv(t, t.TempDir(), t.TempDir())
	c := e.dial("a")
	c.initialize(nil)
	start := func(cfg map[string]any, extra ...any) appproto.ThreadStartResponse {
		t.Helper()
		params := map[string]any{"config": cfg}
		for i := 0; i+1 < len(extra); i += 2 {
			params[extra[i].(string)] = extra[i+1]
		}
		var r appproto.ThreadStartResponse
		if err := pointer(c.call(appproto.MethodThreadStart, params).Result, "", &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := start(map[string]any{"approval_policy": map[string]any{"granular": map[string]any{"sandbox_approval": true, "rules": false, "mcp_elicitations": false}}})
	if g, err := granularFlags(r.ApprovalPolicy.Granular); err != nil ||
		*g != (agent.GranularApproval{SandboxApproval: true}) {
		t.Fatalf("granular approval from config: %s (%v)", r.ApprovalPolicy.Granular, err)
	}
	r = start(map[string]any{"sandbox_workspace_write": map[string]any{"network_access": true}, "sandbox_workspace_write.exclude_slash_tmp": true},
		"sandbox", "workspace-write")
	if r.Sandbox.Type != appproto.SandboxWorkspaceWrite || !r.Sandbox.NetworkAccess || !r.Sandbox.ExcludeSlashTmp || r.Sandbox.ExcludeTmpdirEnvVar {
		t.Fatalf("workspace-write with the config's table: %+v", r.Sandbox)
	}
	r = start(map[string]any{"sandbox_workspace_write.network_access": true}) // the configuration's mode is read-only
	if r.Sandbox.Type != appproto.SandboxReadOnly || r.Sandbox.NetworkAccess {
		t.Fatalf("read-only with a workspace-write table: %+v", r.Sandbox)
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"profile": "p", "profiles.p.model": "x"},
			"failed to load configuration: legacy `profile = \"p\"` config is no longer supported; use `--profile p` with `p.config.toml` instead"},
		{map[string]any{"model": ""}, "No models are available. Set `model` explicitly or check your model catalog configuration."},
		{map[string]any{"model": nil}, "No models are available. Set `model` explicitly or check your model catalog configuration."},
		{map[string]any{"features": []any{1}}, "failed to load configuration: invalid type: sequence, expected struct FeaturesToml\nin `features`\n"},
		{map[string]any{"approval_policy": map[string]any{"granular": map[string]any{"sandbox_approval": true}}},
			"failed to load configuration: missing field `rules`\nin `approval_policy`\n"},
		{map[string]any{"approval_policy": map[string]any{"other": 1}},
			"failed to load configuration: unknown variant `other`, expected one of `untrusted`, `on-failure`, `on-request`, `granular`, `never`\nin `approval_policy`\n"},
		{map[string]any{"sandbox_workspace_write.network_access": "yes"},
			"failed to load configuration: invalid type: string \"yes\", expected a boolean\nin `sandbox_workspace_write.network_access`\n"},
	} {
		if e := c.callErr(appproto.MethodThreadStart, map[string]any{"config": tc.cfg}); e.Code != -32600 || e.Message != tc.want {
			t.Errorf("config %v: %d %q\nwant -32600 %q", tc.cfg, e.Code, e.Message, tc.want)
		}
	}
}

// FuzzRequestConfig feeds arbitrary `config` members to the reader: each
// is refused with -32600 or read into a tree that names every member's
// first key, and checking and applying it never panics.
func FuzzRequestConfig(f *testing.F) {
	for _, seed := range []string{`null`, `"x"`, `{}`, `{"model":"m","a.b.c":1}`, `{"a":1,"a.b":2}`, `{"a.b":2,"a":{"c":[1,2.5,null]}}`,
		`{"":1,".":2,"..":{}}`, `{"approval_policy":{"granular":{}}}`, `{"features":{"shell_tool":false}}`, `{"sandbox_workspace_write":{"writable_roots":[1,"x"]}}`} {
		f.Add([]byte(seed))
	}
	srv, err := New(Config{Core: agenttest.New(agenttest.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	defer srv.Close()
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsontext.Value(raw).IsValid() {
			return // the connection refuses it before any method sees it
		}
		rc, err := parseRequestConfig(jsontext.Value(raw))
		if err != nil {
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidRequest {
				t.Fatalf("%s: error %v is not -32600", raw, err)
			}
			return
		}
		if rc == nil {
			return
		}
		for k := range rc.keys {
			first, _, _ := strings.Cut(k, ".")
			if _, ok := rc.doc[first]; !ok {
				t.Fatalf("%s: member %q is not in the tree %v", raw, k, rc.doc)
			}
		}
		for _, use := range []configUse{configStart, configResume, configFork} {
			_ = checkRequestConfig(rc, use)
			var r overrideReq
			applyRequestConfig(&r, rc, use)
			srv.applyWorkspaceTable(&r, rc)
			_ = rc.noTools()
			_ = rc.namesModel()
		}
	})
}
