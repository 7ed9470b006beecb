package modelclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
)

type fakeAuth struct {
	mu       sync.Mutex
	cred     Credential
	ok       bool
	err      error
	fresh    Credential
	freshErr error
	stale    []Credential
}

func (f *fakeAuth) Credentials(ctx context.Context) (Credential, bool, error) {
	return f.cred, f.ok, f.err
}

func (f *fakeAuth) Unauthorized(ctx context.Context, stale Credential) (Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stale = append(f.stale, stale)
	return f.fresh, f.freshErr
}

// recordAuth answers 401 unless the request carries "Bearer good", and
// records each request's credentials.
func recordAuth(t *testing.T, seen *[][2]string, mu *sync.Mutex) string {
	return server(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		*seen = append(*seen, [2]string{r.Header.Get("Authorization"), r.Header.Get("ChatGPT-Account-ID")})
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"expired token"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n")
	})
}

func TestSignedInRequestCarriesAccountAndRefreshesOnceOn401(t *testing.T) {
	var seen [][2]string
	var mu sync.Mutex
	p := provider(recordAuth(t, &seen, &mu))
	p.RequiresOpenAIAuth = true
	p.EnvKey = "OPENAI_API_KEY"
	a := &fakeAuth{cred: Credential{Bearer: "old", AccountID: "acct-1"}, ok: true, fresh: Credential{Bearer: "good", AccountID: "acct-1"}}
	c := client(t, p, Options{Auth: a, Getenv: func(string) string { return "sk-env" }})
	s, err := c.Stream(testCtx(t), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := [][2]string{{"Bearer old", "acct-1"}, {"Bearer good", "acct-1"}}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] || len(a.stale) != 1 || a.stale[0].Bearer != "old" {
		t.Fatalf("requests %v, refreshes %v", seen, a.stale)
	}
}

func TestRefusedRefreshIsAnAuthError(t *testing.T) {
	var seen [][2]string
	var mu sync.Mutex
	p := provider(recordAuth(t, &seen, &mu))
	p.RequiresOpenAIAuth = true
	signIn := errors.New("Please log out and sign in again.")
	a := &fakeAuth{cred: Credential{Bearer: "old"}, ok: true, freshErr: signIn}
	_, err := client(t, p, Options{Auth: a}).Stream(testCtx(t), Request{Model: "m"})
	var ae *AuthError
	if !errors.As(err, &ae) || !errors.Is(err, signIn) || len(seen) != 1 {
		t.Fatalf("err = %v, requests %v", err, seen)
	}
	// An error before any request (the proactive refresh) too.
	a = &fakeAuth{err: signIn}
	_, err = client(t, p, Options{Auth: a}).Stream(testCtx(t), Request{Model: "m"})
	if !errors.As(err, &ae) || len(seen) != 1 {
		t.Fatalf("err = %v, requests %v", err, seen)
	}
}

func TestNotSignedInFallsBackToEnvKey(t *testing.T) {
	var seen [][2]string
	var mu sync.Mutex
	p := provider(recordAuth(t, &seen, &mu))
	p.RequiresOpenAIAuth = true
	p.EnvKey = "OPENAI_API_KEY"
	c := client(t, p, Options{Auth: &fakeAuth{}, Getenv: func(string) string { return "good" }})
	s, err := c.Stream(testCtx(t), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(seen) != 1 || seen[0] != [2]string{"Bearer good", ""} {
		t.Fatalf("requests %v", seen)
	}
	// A provider that does not require OpenAI auth never asks.
	p.RequiresOpenAIAuth = false
	a := &fakeAuth{err: errors.New("must not be asked")}
	s, err = client(t, p, Options{Auth: a, Getenv: func(string) string { return "good" }}).Stream(testCtx(t), Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
