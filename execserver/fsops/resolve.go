package fsops

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinkHops matches Linux's limit, so a loop fails as the kernel would.
const maxSymlinkHops = 40

func splitComponents(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// resolvePath returns the physical path p names: symlinks among its
// existing components are resolved and ".." is applied to the resolved
// parent, as the kernel does. followFinal says whether a symlink in the last
// component is resolved too. Missing components are kept as they are, so
// paths that are about to be created resolve, and the walk goes on after
// them.
func resolvePath(p string, followFinal bool) (string, error) {
	comps := splitComponents(p)
	cur := "/"
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if len(comps) == 0 && !followFinal {
			return next, nil
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Keep walking: a later ".." can lead back to components
				// that exist, and a symlink among them must be resolved
				// too ("missing/../link/x" names link's target). Joining
				// the rest lexically here once let such a path escape the
				// roots.
				cur = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		comps = append(splitComponents(target), comps...)
	}
	return cur, nil
}

// within reports whether p is dir or below it; both must be clean.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// errFinalSymlink is the followSymlinks: false refusal of a path whose last
// component is a symlink. Codex words it so for fs/getMetadata and
// fs/remove; the methods that open the path answer as the open would
// (ELOOP for a file, ENOTDIR or EEXIST for a directory to create).
var errFinalSymlink = invalidRequest("path contains a symbolic link")

// checkNoSymlinks is the followSymlinks: false rule: the path must be
// normalized and none of its components may be a symlink. Codex walks the
// path with O_NOFOLLOW|O_DIRECTORY, so a symlink before the last component
// fails as ENOTDIR; a symlink as the last one is errFinalSymlink.
func checkNoSymlinks(p string) error {
	if !filepath.IsAbs(p) {
		return invalidRequest("no-follow filesystem operations require an absolute path")
	}
	if filepath.Clean(p) != p {
		return invalidRequest("no-follow filesystem operations require a normalized path")
	}
	cur := "/"
	for _, c := range splitComponents(p) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return osError(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if cur != filepath.Clean(p) {
				return osError(syscall.ENOTDIR)
			}
			return errFinalSymlink
		}
	}
	return nil
}

// readMountPoints lists the mount points of this process's namespace.
func readMountPoints(mountinfo string) ([]string, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		points = append(points, unescapeMountField(fields[4]))
	}
	return points, sc.Err()
}

// unescapeMountField undoes the kernel's octal escapes (\040 for space...).
func unescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			v := 0
			ok := true
			for _, d := range s[i+1 : i+4] {
				if d < '0' || d > '7' {
					ok = false
					break
				}
				v = v*8 + int(d-'0')
			}
			if ok && v < 256 {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
