package execproto

import "strings"

// PathURI returns the `file://` URI of a native absolute path, escaping the
// bytes Codex escapes (controls, space, " # % < > ? ` { } \, DEL and
// non-ASCII) so that fsops.ParsePathURI(PathURI(p)) == p for a clean path.
func PathURI(path string) string {
	const hexdigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(path) + 8)
	b.WriteString("file://")
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("\"#%<>?`{}\\", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
