package modelclient

import (
	"net/http"
	"net/url"
	"testing"
)

// TestRedirectKeepsCredentialsOnTheirOrigin: a base_url that redirects to
// another origin (here another port of the same host, which net/http alone
// would trust) gets the request without the key or the provider's headers;
// a redirect within the origin keeps them.
func TestRedirectKeepsCredentialsOnTheirOrigin(t *testing.T) {
	other, otherGot := capturing(t, sse(completedSSE))
	same, sameGot := capturing(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/responses":
			http.Redirect(w, r, "/v2/responses", http.StatusTemporaryRedirect)
		case "/v2/responses":
			http.Redirect(w, r, other+"/v3/responses", http.StatusTemporaryRedirect)
		}
	})
	p := provider(same)
	p.EnvKey = "TEST_KEY"
	p.HTTPHeaders = map[string]string{"X-Api-Key": "secret-header"}
	c := client(t, p, Options{Getenv: func(string) string { return "sk-secret" }})
	s, err := c.Stream(testCtx(t), Request{Model: "m", Input: []Item{Message("user", "hi")}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	sg := sameGot()
	if len(sg) != 2 || sg[1].path != "/v2/responses" {
		t.Fatalf("same origin saw %d requests", len(sg))
	}
	if sg[1].header.Get("Authorization") != "Bearer sk-secret" || sg[1].header.Get("X-Api-Key") != "secret-header" {
		t.Errorf("a same-origin redirect lost the credentials: %v", sg[1].header)
	}
	og := otherGot()
	if len(og) != 1 || og[0].path != "/v3/responses" {
		t.Fatalf("other origin saw %+v", og)
	}
	if h := og[0].header; h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
		t.Errorf("credentials reached another origin: %v", h)
	}
	if string(og[0].body) != string(sg[0].body) || og[0].header.Get("Accept") != "text/event-stream" {
		t.Errorf("the redirected request changed: body %q, Accept %q", og[0].body, og[0].header.Get("Accept"))
	}
}

func TestEndpoint(t *testing.T) {
	for base, want := range map[string]string{
		"http://h/v1":           "http://h/v1/responses",
		"http://h/v1/":          "http://h/v1/responses",
		"https://h:8443":        "https://h:8443/responses",
		"http://h/openai/v1?x=": "http://h/openai/v1/responses?api-version=1&x=",
	} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		q := map[string]string{}
		if u.RawQuery != "" {
			q["api-version"] = "1"
		}
		if got := endpoint(u, q); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", base, got, want)
		}
	}
}
