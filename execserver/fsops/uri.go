package fsops

import (
	"strings"
)

// ParsePathURI turns a `file://` URI from the wire into a native absolute
// path, the way Codex's PathUri does: the scheme is case-insensitive, the
// host must be empty or "localhost", "." and ".." segments are removed
// lexically (URL rules, so "a/b/.." is "a" even when b is a symlink), and
// percent escapes are decoded. Errors carry Codex's codes and messages.
func ParsePathURI(uri string) (string, error) {
	scheme, rest, ok := splitScheme(uri)
	if !ok {
		return "", invalidParams("invalid URI: relative URL without a base")
	}
	if !strings.EqualFold(scheme, "file") {
		return "", invalidParams("unsupported path URI scheme `%s`", strings.ToLower(scheme))
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		if strings.IndexByte(rest[:i], '?') >= 0 {
			return "", invalidParams("query parameters are not allowed in path URIs")
		}
		return "", invalidParams("fragments are not allowed in path URIs")
	}
	if strings.IndexByte(rest, '?') >= 0 {
		return "", invalidParams("query parameters are not allowed in path URIs")
	}
	rawPath := rest
	if strings.HasPrefix(rest, "//") {
		authority := rest[2:]
		rawPath = ""
		if i := strings.IndexByte(authority, '/'); i >= 0 {
			authority, rawPath = authority[:i], authority[i:]
		}
		if authority != "" && !strings.EqualFold(authority, "localhost") {
			return "", invalidRequest("'%s' is invalid on 'linux'", uri)
		}
		if rawPath == "" {
			rawPath = "/"
		}
	}
	if !strings.HasPrefix(rawPath, "/") {
		return "", invalidRequest("'%s' is invalid on 'linux'", uri)
	}
	p := percentDecode(removeDotSegments(rawPath))
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidParams("'%s' is invalid on 'linux'", uri)
	}
	return p, nil
}

// splitScheme splits "scheme:rest" per RFC 3986.
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isDotSegment(seg string) bool {
	return seg == "." || strings.EqualFold(seg, "%2e")
}

func isDotDotSegment(seg string) bool {
	switch strings.ToLower(seg) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// removeDotSegments applies URL dot-segment removal to an absolute path.
func removeDotSegments(p string) string {
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	trailing := false
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case isDotSegment(seg):
			trailing = last
		case isDotDotSegment(seg):
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			trailing = last
		default:
			out = append(out, seg)
			trailing = false
		}
	}
	res := "/" + strings.Join(out, "/")
	if trailing && !strings.HasSuffix(res, "/") {
		res += "/"
	}
	return res
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// percentDecode decodes %XX escapes and, like the URL standard, leaves a
// malformed escape as it is rather than failing.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
