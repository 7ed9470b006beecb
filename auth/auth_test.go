package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func jwt(t testing.TB, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + ".sig"
}

func idToken(t testing.TB, plan string) string {
	return jwt(t, map[string]any{"email": "u@example.com", "https://api.openai.com/auth": map[string]any{
		"chatgpt_plan_type": plan, "chatgpt_account_id": "acct-1", "chatgpt_user_id": "user-1"}})
}

// writeChatGPT writes a ChatGPT-mode auth.json as Codex 0.169 writes it,
// plus a member codexd does not know.
func writeChatGPT(t *testing.T, home, access string) {
	t.Helper()
	v := map[string]any{
		"auth_mode": "chatgpt", "OPENAI_API_KEY": nil,
		"tokens":       map[string]any{"id_token": idToken(t, "plus"), "access_token": access, "refresh_token": "rt-1", "account_id": "acct-1"},
		"last_refresh": "2025-01-01T00:00:00Z", "agent_identity": "kept",
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(Path(home), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

type tokenServer struct {
	*httptest.Server
	calls  atomic.Int32
	bodies chan map[string]string
	status int
	answer string
}

func newTokenServer(t *testing.T, status int, answer string) *tokenServer {
	ts := &tokenServer{bodies: make(chan map[string]string, 16), status: status, answer: answer}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.calls.Add(1)
		var body map[string]string
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/oauth/token" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &body) != nil {
			http.Error(w, "bad request", 400)
			return
		}
		ts.bodies <- body
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ts.status)
		io.WriteString(w, ts.answer)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func manager(home string, ts *tokenServer) *Manager {
	return NewManager(home, Options{Getenv: func(k string) string {
		if k == TokenURLOverrideEnv && ts != nil {
			return ts.URL + "/oauth/token"
		}
		return ""
	}})
}

func TestAPIKeyModeAsCodexWritesIt(t *testing.T) {
	home := t.TempDir()
	// `codex login --with-api-key` 0.169 writes exactly this.
	os.WriteFile(Path(home), []byte("{\n  \"auth_mode\": \"apikey\",\n  \"OPENAI_API_KEY\": \"sk-test-abc123456789\"\n}"), 0o600)
	c, err := manager(home, nil).Credentials(context.Background())
	if err != nil || c.Mode != ModeAPIKey || c.Bearer != "sk-test-abc123456789" || c.AccountID != "" {
		t.Fatalf("credentials = %+v, %v", c, err)
	}
	a, err := manager(home, nil).Account()
	if err != nil || a.Mode != ModeAPIKey {
		t.Fatalf("account = %+v, %v", a, err)
	}
	// And SaveAPIKey writes what Codex writes.
	home2 := t.TempDir()
	if err := SaveAPIKey(home2, "sk-test-abc123456789"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(Path(home2))
	want := "{\n  \"OPENAI_API_KEY\": \"sk-test-abc123456789\",\n  \"auth_mode\": \"apikey\"\n}"
	if string(got) != want {
		t.Fatalf("auth.json = %s, want %s", got, want)
	}
	if st, _ := os.Stat(Path(home2)); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
}

func TestNotSignedIn(t *testing.T) {
	home := t.TempDir()
	if _, err := manager(home, nil).Credentials(context.Background()); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("err = %v", err)
	}
	os.WriteFile(Path(home), []byte(`{"OPENAI_API_KEY": null}`), 0o600)
	if _, err := manager(home, nil).Account(); !errors.Is(err, ErrNotSignedIn) {
		t.Fatalf("err = %v", err)
	}
}

func TestChatGPTValidTokenIsUsedAsItIs(t *testing.T) {
	home := t.TempDir()
	access := jwt(t, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	writeChatGPT(t, home, access)
	ts := newTokenServer(t, 200, `{}`)
	c, err := manager(home, ts).Credentials(context.Background())
	if err != nil || c.Mode != ModeChatGPT || c.Bearer != access || c.AccountID != "acct-1" {
		t.Fatalf("credentials = %+v, %v", c, err)
	}
	if ts.calls.Load() != 0 {
		t.Fatal("a valid token was refreshed")
	}
	a, err := manager(home, ts).Account()
	if err != nil || a != (Account{Mode: ModeChatGPT, Email: "u@example.com", PlanType: "plus", UserID: "user-1", AccountID: "acct-1"}) {
		t.Fatalf("account = %+v, %v", a, err)
	}
}

func TestExpiredTokenIsRefreshedAndWrittenBack(t *testing.T) {
	home := t.TempDir()
	writeChatGPT(t, home, jwt(t, map[string]any{"exp": 1000}))
	newAccess := jwt(t, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	newID := idToken(t, "pro")
	answer, _ := json.Marshal(map[string]string{"id_token": newID, "access_token": newAccess, "refresh_token": "rt-2"})
	ts := newTokenServer(t, 200, string(answer))
	c, err := manager(home, ts).Credentials(context.Background())
	if err != nil || c.Bearer != newAccess || c.AccountID != "acct-1" {
		t.Fatalf("credentials = %+v, %v", c, err)
	}
	body := <-ts.bodies
	want := map[string]string{"client_id": ClientID, "grant_type": "refresh_token", "refresh_reason": "proactive_expiry", "refresh_token": "rt-1"}
	if len(body) != len(want) {
		t.Fatalf("refresh body = %v", body)
	}
	for k, v := range want {
		if body[k] != v {
			t.Fatalf("refresh body = %v, want %v", body, want)
		}
	}
	st, err := os.Stat(Path(home))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json mode %v, %v", st.Mode(), err)
	}
	f, err := Read(home)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tokens.AccessToken != newAccess || f.Tokens.RefreshToken != "rt-2" || f.Tokens.IDToken != newID ||
		f.LastRefresh == nil || time.Since(*f.LastRefresh) > time.Minute || string(f.rest["agent_identity"]) != `"kept"` {
		t.Fatalf("written back: %+v %+v", f, f.Tokens)
	}
	entries, _ := os.ReadDir(home)
	if len(entries) != 1 {
		t.Fatalf("left in CODEX_HOME: %v", entries)
	}
	if a, _ := manager(home, ts).Account(); a.PlanType != "pro" {
		t.Fatalf("plan after refresh %q", a.PlanType)
	}
}

func TestRefusedRefreshSaysSignInAgain(t *testing.T) {
	for code, want := range map[string]string{
		`{"error":{"code":"refresh_token_expired","message":"x"}}`: "refresh token has expired. Please log out and sign in again.",
		`{"error":"refresh_token_reused"}`:                         "already used. Please log out and sign in again.",
		`{"code":"refresh_token_invalidated"}`:                     "was revoked. Please log out and sign in again.",
		`not json`:                                                 "could not be refreshed. Please log out and sign in again.",
	} {
		home := t.TempDir()
		writeChatGPT(t, home, jwt(t, map[string]any{"exp": 1000}))
		before, _ := os.ReadFile(Path(home))
		ts := newTokenServer(t, 401, code)
		_, err := manager(home, ts).Credentials(context.Background())
		var se *SignInError
		if !errors.As(err, &se) || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("%s: err = %v", code, err)
		}
		if after, _ := os.ReadFile(Path(home)); string(after) != string(before) {
			t.Fatalf("%s: auth.json changed", code)
		}
	}
}

func TestTransientRefreshFailureIsNotSignIn(t *testing.T) {
	home := t.TempDir()
	writeChatGPT(t, home, jwt(t, map[string]any{"exp": 1000}))
	ts := newTokenServer(t, 503, `{}`)
	_, err := manager(home, ts).Credentials(context.Background())
	var se *SignInError
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err = %v", err)
	}
}

func TestConcurrentRefreshesSendOneRequest(t *testing.T) {
	home := t.TempDir()
	writeChatGPT(t, home, jwt(t, map[string]any{"exp": 1000}))
	newAccess := jwt(t, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	ts := newTokenServer(t, 200, `{"access_token":"`+newAccess+`","refresh_token":"rt-2"}`)
	m := manager(home, ts)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := m.Credentials(context.Background()); err != nil || c.Bearer != newAccess {
				t.Errorf("credentials = %+v, %v", c, err)
			}
		}()
	}
	wg.Wait()
	if n := ts.calls.Load(); n != 1 {
		t.Fatalf("%d refresh requests", n)
	}
}

func TestRefreshAfterUnauthorized(t *testing.T) {
	home := t.TempDir()
	old := jwt(t, map[string]any{"exp": time.Now().Add(time.Hour).Unix()})
	writeChatGPT(t, home, old)
	newAccess := jwt(t, map[string]any{"exp": time.Now().Add(2 * time.Hour).Unix()})
	ts := newTokenServer(t, 200, `{"access_token":"`+newAccess+`"}`)
	m := manager(home, ts)
	c, _ := m.Credentials(context.Background())
	c2, err := m.RefreshAfterUnauthorized(context.Background(), c)
	if err != nil || c2.Bearer != newAccess {
		t.Fatalf("credentials = %+v, %v", c2, err)
	}
	if body := <-ts.bodies; body["refresh_reason"] != ReasonUnauthorized {
		t.Fatalf("body %v", body)
	}
	// A second 401 on the old token finds the new one stored: no request.
	c3, err := m.RefreshAfterUnauthorized(context.Background(), c)
	if err != nil || c3.Bearer != newAccess || ts.calls.Load() != 1 {
		t.Fatalf("credentials = %+v, %v, %d calls", c3, err, ts.calls.Load())
	}
}

func TestNoExpUsesLastRefreshAge(t *testing.T) {
	home := t.TempDir()
	writeChatGPT(t, home, "opaque-token")
	m := manager(home, nil)
	m.opts.Now = func() time.Time { return time.Date(2025, 1, 5, 0, 0, 0, 0, time.UTC) }
	f, _ := Read(home)
	if m.due(f) {
		t.Fatal("4 days after the last refresh: due")
	}
	m.opts.Now = func() time.Time { return time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC) }
	if !m.due(f) {
		t.Fatal("9 days after the last refresh: not due")
	}
}

func TestRemove(t *testing.T) {
	home := t.TempDir()
	SaveAPIKey(home, "k")
	if ok, err := Remove(home); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := Remove(home); ok || err != nil {
		t.Fatal(ok, err)
	}
}

func TestPlan(t *testing.T) {
	for raw, want := range map[string]string{"Plus": "plus", "hc": "enterprise", "education": "edu", "weird": "unknown", "promax": "promax"} {
		if got := Plan(raw); got != want {
			t.Errorf("Plan(%q) = %q, want %q", raw, got, want)
		}
	}
}
