package applypatch

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// memFS is an in-memory FS that records every mutating call and can be told
// to fail one.
type memFS struct {
	files map[string]string
	dirs  map[string]bool
	ops   []string // "write /p", "remove /p", "mkdir /p", in order
	// failOn makes the call whose record equals it fail with failErr.
	failOn  string
	failErr error
}

func newMemFS(files map[string]string) *memFS {
	m := &memFS{files: map[string]string{}, dirs: map[string]bool{"/": true}}
	for p, c := range files {
		m.files[p] = c
		for d := filepath.Dir(p); !m.dirs[d]; d = filepath.Dir(d) {
			m.dirs[d] = true
		}
	}
	return m
}

func (m *memFS) fail(op string) error {
	m.ops = append(m.ops, op)
	if op == m.failOn {
		return m.failErr
	}
	return nil
}

func (m *memFS) ReadFile(_ context.Context, p string) ([]byte, error) {
	if m.dirs[p] {
		return nil, &fs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	}
	c, ok := m.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(c), nil
}

func (m *memFS) WriteFile(_ context.Context, p string, data []byte) error {
	if err := m.fail("write " + p); err != nil {
		return err
	}
	if m.dirs[p] {
		return &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR}
	}
	if !m.dirs[filepath.Dir(p)] {
		return &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
	}
	m.files[p] = string(data)
	return nil
}

func (m *memFS) Remove(_ context.Context, p string) error {
	if err := m.fail("remove " + p); err != nil {
		return err
	}
	if _, ok := m.files[p]; !ok {
		return &fs.PathError{Op: "remove", Path: p, Err: syscall.ENOENT}
	}
	delete(m.files, p)
	return nil
}

func (m *memFS) MkdirAll(_ context.Context, p string) error {
	if err := m.fail("mkdir " + p); err != nil {
		return err
	}
	for d := p; !m.dirs[d]; d = filepath.Dir(d) {
		if _, isFile := m.files[d]; isFile {
			return &fs.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
		}
		m.dirs[d] = true
	}
	return nil
}

func (m *memFS) Stat(_ context.Context, p string) (FileInfo, error) {
	if m.dirs[p] {
		return FileInfo{IsDir: true}, nil
	}
	if _, ok := m.files[p]; ok {
		return FileInfo{}, nil
	}
	return FileInfo{}, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

// snapshot renders the files, sorted, for comparisons.
func (m *memFS) snapshot() string {
	var keys []string
	for k := range m.files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q\n", k, m.files[k])
	}
	return b.String()
}
