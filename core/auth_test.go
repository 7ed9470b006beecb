package core

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/auth"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/mockmodel"
)

func testJWT(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + ".sig"
}

// chatGPTHome is a CODEX_HOME signed in with ChatGPT (an expired access
// token), whose config selects the built-in OpenAI provider.
func chatGPTHome(t *testing.T) string {
	home := t.TempDir()
	a := map[string]any{"auth_mode": "chatgpt", "OPENAI_API_KEY": nil, "last_refresh": "2025-01-01T00:00:00Z",
		"tokens": map[string]any{"id_token": testJWT(map[string]any{"email": "u@example.com"}),
			"access_token": testJWT(map[string]any{"exp": 1000}), "refresh_token": "rt-1", "account_id": "acct-1"}}
	b, _ := json.Marshal(a)
	if err := os.WriteFile(filepath.Join(home, auth.FileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "model = \"mock-model\"\napproval_policy = \"never\"\n[model_providers.openai]\nrequest_max_retries = 0\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// signedInTurn runs one MOCK:hello turn on home's sign-in, the ChatGPT
// backend being the mock model and the token endpoint tokenURL.
func signedInTurn(t *testing.T, home, tokenURL string) (agent.TurnCompleted, *mockmodel.Server) {
	t.Helper()
	mock := mockmodel.New(mockmodel.Options{})
	url, err := mock.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	cfg, err := config.Load(config.LoadOptions{CodexHome: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m := auth.NewManager(home, auth.Options{Getenv: func(k string) string {
		if k == auth.TokenURLOverrideEnv {
			return tokenURL
		}
		return ""
	}})
	cc, err := ConfigFrom(Setup{Config: cfg, Cwd: t.TempDir(), Auth: m, ChatGPTBaseURL: url,
		ExecDialer: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, execclient.Options{})
		}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	l, err := c.StartThread(t.Context(), agent.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Thread.Submit(t.Context(), agent.UserInput{Input: text("MOCK:hello")}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, l.Thread, isTurnCompleted)
	return evs[len(evs)-1].Msg.(agent.TurnCompleted), mock
}

func TestChatGPTSignInRefreshesAndSignsTheTurn(t *testing.T) {
	home := chatGPTHome(t)
	fresh := testJWT(map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"access_token":"`+fresh+`","refresh_token":"rt-2"}`)
	}))
	defer tokens.Close()
	done, mock := signedInTurn(t, home, tokens.URL)
	if done.Status != agent.TurnStatusCompleted {
		t.Fatalf("turn %+v %+v", done, done.Error)
	}
	h := mock.Requests()[0].Header
	if h.Get("Authorization") != "Bearer "+fresh || h.Get("ChatGPT-Account-ID") != "acct-1" {
		t.Fatalf("request headers: authorization set %v, account %q", h.Get("Authorization") != "", h.Get("ChatGPT-Account-ID"))
	}
	f, err := auth.Read(home)
	if err != nil || f.Tokens.AccessToken != fresh || f.Tokens.RefreshToken != "rt-2" {
		t.Fatalf("auth.json not written back: %v", err)
	}
}

func TestRefusedRefreshEndsTheTurnAskingToSignInAgain(t *testing.T) {
	home := chatGPTHome(t)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":"refresh_token_expired"}}`)
	}))
	defer tokens.Close()
	done, mock := signedInTurn(t, home, tokens.URL)
	if done.Status != agent.TurnStatusFailed || done.Error == nil || !strings.Contains(done.Error.Message, "sign in again") {
		t.Fatalf("turn %+v %+v", done, done.Error)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Fatalf("%d model requests with an invalid sign-in", n)
	}
}
