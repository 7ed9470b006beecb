package auth

import (
	"bytes"
	"testing"
)

// FuzzParse: any auth.json either fails to parse or survives a
// round trip with the same mode and credentials.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse(data)
		if err != nil {
			return
		}
		out, err := a.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		b, err := Parse(out)
		if err != nil {
			t.Fatalf("reparse of %s: %v", out, err)
		}
		if a.EffectiveMode() != b.EffectiveMode() || a.OpenAIAPIKey != b.OpenAIAPIKey {
			t.Fatalf("round trip changed the sign-in: %s", out)
		}
		if out2, _ := b.Marshal(); !bytes.Equal(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		if a.Tokens != nil {
			ParseClaims(a.Tokens.IDToken)
			expiry(a.Tokens.AccessToken)
		}
	})
}

func FuzzParseClaims(f *testing.F) {
	f.Fuzz(func(t *testing.T, tok string) {
		ParseClaims(tok)
		expiry(tok)
	})
}
