package rpcserve

import (
	"strings"
	"testing"
)

// FuzzBearerToken: any Authorization header is parsed or refused; a
// token is only ever found after a case-insensitive "Bearer " scheme, and
// is trimmed.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  abc ", "Basic abc", "Bearer", "", " BEARER\tx y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearerToken(h)
		if !ok {
			return
		}
		scheme, _, _ := strings.Cut(strings.TrimSpace(h), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			t.Fatalf("token %q from scheme %q", tok, scheme)
		}
		if tok != strings.TrimSpace(tok) {
			t.Fatalf("untrimmed token %q", tok)
		}
	})
}
