package appserver

import (
	"os"
	"path/filepath"
	"strings"
)

// clientCwd checks a cwd a client gives a thread or a turn before the core
// stores it (nil: none given). Whatever is stored is used by every later
// command of the thread, so it must be a usable path:
//   - a NUL byte cannot name a file: refused with the error Codex's fs/*
//     methods give (Codex 0.169 stores such a cwd);
//   - empty means none, as in Codex;
//   - a relative path is taken from the server's default cwd, as Codex
//     takes it from its own working directory;
//   - the result is cleaned lexically ("a/../b" is "b"), as Codex's
//     absolute paths are.
func (s *Server) clientCwd(cwd *string) (*string, error) {
	if cwd == nil {
		return nil, nil
	}
	p := *cwd
	if strings.IndexByte(p, 0) >= 0 {
		return nil, invalidRequest("file name contained an unexpected NUL byte")
	}
	if p == "" {
		return nil, nil
	}
	if !filepath.IsAbs(p) {
		base := s.core.Config().Settings.Cwd
		if !filepath.IsAbs(base) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, internalError("resolving a relative cwd: " + err.Error())
			}
			base = filepath.Join(wd, base)
		}
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	return &p, nil
}
