// Canonical base64, as Codex's serde decoder accepts it: for fs and
// process params that carry bytes.

package execproto

import (
	"bytes"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	fastb64 "github.com/segmentio/asm/base64"
)

// CheckBase64 reports why s is not canonical standard base64 (with
// padding, no trailing bits set, nothing else), as Codex decodes it.
func CheckBase64(s string) error { return checkBase64(s) }

// checkBase64String checks a JSON string token holding base64, in place
// when it has no escapes (base64 needs none). Valid base64, the common
// case, is recognised by the vectorised decoder, a piece at a time into a
// small buffer; the byte-by-byte check runs only to word what is wrong.
func checkBase64String(raw []byte) error {
	if bytes.IndexByte(raw, '\\') < 0 {
		b := raw[1 : len(raw)-1]
		if len(b)%4 == 0 && validBase64Fast(b) {
			return nil
		}
		return checkBase64(b)
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return err
	}
	return checkBase64(s)
}

func checkBase64[T string | []byte](s T) error {
	if len(s)%4 != 0 {
		for i := 0; i < len(s); i++ {
			if !isBase64(s[i]) && s[i] != '=' {
				return fmt.Errorf("invalid character %q at offset %d", s[i], i)
			}
		}
		return fmt.Errorf("its length %d is not a multiple of 4", len(s))
	}
	pad := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isBase64(c):
			if pad > 0 {
				return fmt.Errorf("padding before the end, at offset %d", i-pad)
			}
		case c == '=':
			pad++
			if pad > 2 || i < len(s)-2 {
				return fmt.Errorf("padding before the end, at offset %d", i)
			}
		default:
			return fmt.Errorf("invalid character %q at offset %d", c, i)
		}
	}
	if pad > 0 {
		last := len(s) - pad - 1
		v := base64Value(s[last])
		if (pad == 1 && v&0x3 != 0) || (pad == 2 && v&0xf != 0) {
			return fmt.Errorf("the last character %q at offset %d has bits set past the end of the data", s[last], last)
		}
	}
	return nil
}

// validBase64Fast reports whether b (a multiple of 4 bytes, with no
// newlines: a JSON string without escapes has none) is strict standard
// base64.
func validBase64Fast(b []byte) bool {
	var dst [3 * 1024]byte
	for len(b) > 0 {
		n := min(len(b), 4*1024)
		if _, err := strictBase64.Decode(dst[:], b[:n]); err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}

var strictBase64 = fastb64.StdEncoding.Strict()

// base64Alphabet marks the bytes of the standard alphabet.
var base64Alphabet = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = true
	}
	return t
}()

func isBase64(c byte) bool { return base64Alphabet[c] }

func base64Value(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '+':
		return 62
	}
	return 63
}
