package execclient

import "strings"

// PathURI returns the file:// URI of an absolute host path, as the
// exec-server expects for cwd and fs paths: controls, space, non-ASCII and
// " # % < > ? ` { } \ are percent-escaped.
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
