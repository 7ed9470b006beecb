package appserver

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/auth"
)

func TestAccountReadReportsTheStoredSignIn(t *testing.T) {
	home := t.TempDir()
	read := func(t *testing.T) string {
		e := newEnv(t, agenttest.Options{}, Config{Auth: auth.NewManager(home, auth.Options{}), RequiresOpenAIAuth: true})
		ic := e.inproc("c")
		ic.initialize()
		r, err := Call(bg, ic.c, appproto.AccountRead, appproto.GetAccountParams{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r, json.Deterministic(true))
		return string(b)
	}
	if got, want := read(t), `{"account":null,"userId":null,"requiresOpenaiAuth":true,"workspaceRouting":null}`; got != want {
		t.Fatalf("not signed in: %s, want %s", got, want)
	}
	if err := auth.SaveAPIKey(home, "sk-x"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t), `{"account":{"type":"apiKey"},"userId":null,"requiresOpenaiAuth":true,"workspaceRouting":null}`; got != want {
		t.Fatalf("api key: %s, want %s", got, want)
	}
	enc := base64.RawURLEncoding.EncodeToString
	id := enc([]byte(`{}`)) + "." + enc([]byte(`{"email":"u@example.com","https://api.openai.com/auth":{"chatgpt_plan_type":"pro","chatgpt_user_id":"user-1"}}`)) + ".s"
	f := `{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"` + id + `","access_token":"a","refresh_token":"r","account_id":"acct-1"}}`
	if err := os.WriteFile(filepath.Join(home, auth.FileName), []byte(f), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t), `{"account":{"type":"chatgpt","email":"u@example.com","planType":"pro"},"userId":"user-1","requiresOpenaiAuth":true,"workspaceRouting":null}`; got != want {
		t.Fatalf("chatgpt: %s, want %s", got, want)
	}
}

func TestConfigWarningsFollowInitialize(t *testing.T) {
	d := "Codex would run a program at each turn's end; codexd 0.2 does not implement it."
	e := newEnv(t, agenttest.Options{}, Config{ConfigWarnings: []appproto.ConfigWarningNotification{{Summary: "codexd ignores config key `notify`", Details: &d}}})
	ic := e.inproc("c")
	ic.initialize()
	m := ic.note("configWarning")
	var n appproto.ConfigWarningNotification
	if err := json.Unmarshal(m.Params, &n); err != nil || n.Summary != "codexd ignores config key `notify`" || n.Details == nil || *n.Details != d {
		t.Fatalf("configWarning %s %v", m.Params, err)
	}
}
