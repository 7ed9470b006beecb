package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// The real Codex exec-server acts on any path it is given: `fs/remove` of
// file:/// would run `rm -rf /`. Before the differential test sends a
// message to either server, checkSafe refuses it unless every path a
// destructive method could act on lies inside the sequence's scratch
// directory.
//
// A message is destructive when any object in it, at any depth, has a
// "method" naming one of destructiveMethods (duplicate keys and batches
// included: what a lenient parser might make of it counts). In such a
// message every string that a URL parser could read as a file: URI (after
// it drops tabs and newlines and trims controls and spaces, as WHATWG URL
// parsing does) must be a plain file:///... URI whose path, decoded and
// with its dot segments removed, is the scratch directory or below it, and
// no symlink on the way may lead out. Strings that are not file: URIs are
// rejected by the server's URI parser ("relative URL without a base",
// "unsupported path URI scheme") and cannot name a path. Positional params
// (arrays) are covered because every string is checked, wherever it is.
//
// A frame that is not valid JSON is refused if it mentions a destructive
// method at all, or holds an escape that could spell one.

// destructiveMethods change or remove files. fs/open is in the list
// because mode "replace" truncates; fs/writeBlock only writes through a
// handle whose fs/open was checked.
var destructiveMethods = map[string]bool{
	"fs/remove": true, "fs/writeFile": true, "fs/copy": true,
	"fs/createDirectory": true, "fs/open": true,
}

// checkSafe returns why msg must not be sent, or nil. scratch is absolute
// and canonical (no symlinks).
func checkSafe(msg []byte, scratch string) error {
	strs, destructive, err := scanStrings(msg)
	if err != nil {
		// Not JSON values one after the other: refuse anything that might
		// name a method that writes.
		low := strings.ToLower(string(msg))
		for m := range destructiveMethods {
			if strings.Contains(low, strings.ToLower(strings.TrimPrefix(m, "fs/"))) {
				return fmt.Errorf("a frame that is not JSON mentions %s", m)
			}
		}
		if strings.Contains(low, `\u`) || strings.Contains(low, `\/`) {
			return errors.New("a frame that is not JSON holds an escape that could spell a method")
		}
		if !destructive {
			return nil
		}
	}
	if !destructive {
		return nil
	}
	for _, s := range strs {
		if err := checkURIString(s, scratch); err != nil {
			return err
		}
	}
	return nil
}

// scanStrings returns every string of the JSON values in msg (names
// included, duplicates included) and whether any member named "method" has
// a destructive value, at any depth.
func scanStrings(msg []byte) (strs []string, destructive bool, err error) {
	d := jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	lastName := ""
	for {
		kind, n := d.StackIndex(d.StackDepth())
		isName := kind == '{' && n%2 == 0
		tok, err := d.ReadToken()
		if err == io.EOF {
			return strs, destructive, nil
		}
		if err != nil {
			return strs, destructive, err
		}
		if tok.Kind() != '"' {
			lastName = ""
			continue
		}
		s := tok.String()
		strs = append(strs, s)
		switch {
		case isName:
			lastName = s
			continue
		case lastName == "method" && destructiveMethods[s]:
			destructive = true
		}
		lastName = ""
	}
}

// checkURIString refuses a string a URL parser could read as a file: URI
// outside scratch.
func checkURIString(s, scratch string) error {
	norm := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	norm = strings.TrimFunc(norm, func(r rune) bool { return r <= ' ' })
	if len(norm) < 5 || !strings.EqualFold(norm[:5], "file:") {
		return nil
	}
	rest := norm[5:]
	if strings.ContainsAny(rest, `\?#`) {
		return fmt.Errorf("%q: a file URI with \\, ? or # is not allowed in a destructive request", s)
	}
	if !strings.HasPrefix(rest, "///") {
		return fmt.Errorf("%q: only file:///absolute URIs are allowed in a destructive request", s)
	}
	p, err := percentDecodeStrict(rest[2:])
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	if strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\') {
		return fmt.Errorf("%q: NUL or backslash in a destructive path", s)
	}
	clean := path.Clean(p)
	if clean != scratch && !strings.HasPrefix(clean, scratch+"/") {
		return fmt.Errorf("%q (%s) is outside the scratch directory %s", s, clean, scratch)
	}
	// No symlink on the way may lead out, not even a dangling one that a
	// write would follow.
	real, err := resolveLexically(clean, 0)
	if err != nil {
		return fmt.Errorf("%q: %v", s, err)
	}
	if real != scratch && !strings.HasPrefix(real, scratch+"/") {
		return fmt.Errorf("%q resolves through a symlink to %s, outside the scratch directory", s, real)
	}
	return nil
}

// resolveLexically follows every symlink of the absolute clean path p,
// including the last component and dangling links; components that do
// not exist are kept as they are.
func resolveLexically(p string, depth int) (string, error) {
	if depth > 40 {
		return "", errors.New("too many levels of symbolic links")
	}
	out := "/"
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, part := range parts {
		if part == "" {
			continue
		}
		next := path.Join(out, part)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			out = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if !path.IsAbs(target) {
			target = path.Join(out, target)
		}
		rest := path.Join(append([]string{path.Clean(target)}, parts[i+1:]...)...)
		return resolveLexically(rest, depth+1)
	}
	return out, nil
}

func percentDecodeStrict(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("a truncated percent escape")
		}
		var c byte
		if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &c); err != nil {
			return "", errors.New("a malformed percent escape")
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), nil
}

func TestCheckSafe(t *testing.T) {
	scratch := t.TempDir()
	scratch, _ = filepath.EvalSymlinks(scratch)
	if err := os.Symlink("/etc", filepath.Join(scratch, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(scratch, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	S := scratch
	safe := []string{
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/in/x"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"` + S + `/in"}}`, // not a URI: refused by the server
		`{"id":1,"method":"fs/remove","params":{"path":"/"}}`,            // the same
		`{"id":1,"method":"fs/remove","params":{"path":"http://x/"}}`,    // unsupported scheme
		`{"id":1,"method":"fs/remove","params":null}`,                    // nothing to act on
		`{"id":1,"method":"fs/copy","params":{"sourcePath":"file://` + S + `/a","destinationPath":"file://` + S + `/in/../b","recursive":false}}`,
		`{"id":1,"method":"fs/readFile","params":{"path":"file:///etc/hostname"}}`, // not destructive
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/in/%2e%2e/x"}}`,
		`not json at all`,
	}
	unsafe := []string{
		`{"id":1,"method":"fs/remove","params":{"path":"file:///"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file:` + S + `"}}`, // file:/abs (not file:///)
		`{"id":1,"method":"fs/remove","params":{"path":"file:a"}}`,         // relative: the url crate makes it /a
		`{"id":1,"method":"fs/remove","params":{"path":" FILE:///tmp"}}`,   // case and spaces
		`{"id":1,"method":"fs/remove","params":{"path":"fi\tle:///tmp"}}`,  // tabs are dropped by URL parsers
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/../x"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/%2e%2e/x"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/out/passwd"}}`, // through a symlink
		`{"id":1,"method":"fs/remove","params":{"path":"file://` + S + `/out"}}`,        // a final symlink (followed by writeFile)
		`{"id":1,"method":"fs/remove","params":{"path":"file://host/` + S + `"}}`,
		`{"id":1,"method":"fs/remove","params":["file:///tmp",true,true]}`, // positional
		`{"id":1,"method":"fs/writeFile","params":{"path":"file://` + S + `/a","dataBase64":"","path":"file:///etc/x"}}`,
		`{"id":1,"method":"fs/readFile","method":"fs/remove","params":{"path":"file:///x"}}`,
		`[{"id":1,"method":"fs/remove","params":{"path":"file:///x"}}]`,
		`{"id":1,"method":"fs/copy","params":{"sourcePath":"file://` + S + `/a","destinationPath":"file:///tmp/b","recursive":true}}`,
		`{"id":1,"method":"fs/open","params":{"handleId":"h","path":"file:///etc/passwd","mode":"replace"}}`,
		`{"id":1,"method":"fs/createDirectory","params":{"path":"file:///x"}}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file:///x"}}{"id":2}`,
		`{"id":1,"method":"fs\/remove","params":{"path":"file:///x"}`,
		`{"id":1,"method":"fs/remove","params":{"path":"file:///x"}`, // truncated
	}
	for _, m := range safe {
		if err := checkSafe([]byte(m), scratch); err != nil {
			t.Errorf("refused a safe message %s: %v", m, err)
		}
	}
	for _, m := range unsafe {
		if err := checkSafe([]byte(m), scratch); err == nil {
			t.Errorf("allowed an unsafe message %s", m)
		}
	}
}
