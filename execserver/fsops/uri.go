package fsops

import (
	"net/netip"
	"strings"
)

// ParsePathURI turns a `file://` URI from the wire into a native absolute
// path the way Codex's PathUri does, which parses it as a URL (the WHATWG
// rules of Rust's url crate) and then takes its path:
//   - leading and trailing spaces and controls are dropped, and tabs and
//     newlines anywhere; the scheme is case-insensitive; a backslash is a
//     slash;
//   - "file:" not followed by "//" starts a path at the root: "file:a.txt"
//     is /a.txt, "file:" is /;
//   - the host must be empty or "localhost" (after percent-decoding and
//     lower-casing); any other host, or a Windows drive letter as the first
//     segment, is -32600 "'<URL>' is invalid on 'linux'", with the URL as
//     the parser wrote it back;
//   - "." and ".." segments are removed lexically (URL rules, so "a/b/.."
//     is "a" even when b is a symlink), then percent escapes are decoded.
//
// Errors carry Codex's codes and messages.
func ParsePathURI(uri string) (string, error) {
	uri = strings.TrimFunc(uri, func(r rune) bool { return r <= ' ' })
	uri = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, uri)
	scheme, rest, ok := splitScheme(uri)
	if !ok {
		return "", invalidParams("invalid URI: relative URL without a base")
	}
	if !strings.EqualFold(scheme, "file") {
		return "", invalidParams("unsupported path URI scheme `%s`", strings.ToLower(scheme))
	}
	rest = strings.ReplaceAll(rest, `\`, "/")
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		if rest[i] == '?' {
			return "", invalidParams("query parameters are not allowed in path URIs")
		}
		return "", invalidParams("fragments are not allowed in path URIs")
	}
	host, rawPath := "", rest
	if strings.HasPrefix(rest, "//") {
		authority := rest[2:]
		rawPath = ""
		if i := strings.IndexByte(authority, '/'); i >= 0 {
			authority, rawPath = authority[:i], authority[i:]
		}
		var err error
		if host, err = parseFileHost(authority); err != nil {
			return "", err
		}
	}
	if !strings.HasPrefix(rawPath, "/") {
		rawPath = "/" + rawPath
	}
	cleaned := removeDotSegments(rawPath)
	serialized := "file://" + host + encodePath(cleaned)
	if host != "" || hasDriveLetter(cleaned) {
		return "", invalidRequest("'%s' is invalid on 'linux'", serialized)
	}
	p := percentDecode(cleaned)
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidParams("'%s' is invalid on 'linux'", serialized)
	}
	return p, nil
}

// parseFileHost returns the host of a file URL as the URL parser keeps it:
// "" for none or localhost, else the lower-cased host.
func parseFileHost(authority string) (string, error) {
	if authority == "" {
		return "", nil
	}
	if strings.HasPrefix(authority, "[") {
		if a, err := netip.ParseAddr(strings.TrimSuffix(authority[1:], "]")); err == nil && a.Is6() && strings.HasSuffix(authority, "]") {
			return "[" + a.String() + "]", nil
		}
		return "", invalidParams("invalid URI: invalid IPv6 address")
	}
	h := strings.ToLower(percentDecode(authority))
	if strings.ContainsAny(h, " #%/:<>?@[]^|\x00") {
		// Userinfo, a port or a forbidden character: the url crate's
		// domain check refuses it.
		return "", invalidParams("invalid URI: invalid international domain name")
	}
	if h == "localhost" {
		return "", nil
	}
	return h, nil
}

// hasDriveLetter reports whether the first segment of p is a Windows drive
// letter ("C:" or "C|"), which no Linux path has.
func hasDriveLetter(p string) bool {
	seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return len(seg) == 2 && (seg[0]|0x20 >= 'a' && seg[0]|0x20 <= 'z') && (seg[1] == ':' || seg[1] == '|')
}

// encodePath writes a path back as the URL parser does: bytes outside
// its path set are percent-encoded, escapes already there are kept.
func encodePath(p string) string {
	const hexdigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\"#<>?`{}", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
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
