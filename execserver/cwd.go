package execserver

import (
	"errors"
	"os"

	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/execserver/procs"
)

// openCwd checks a process's cwd URI against the roots. Under roots it
// also opens the directory through them, and the child is started in that
// directory (procs.StartOptions.CwdDir): a component swapped for a symlink
// after the check cannot move the child outside the roots.
func (s *Server) openCwd(id, uri string) (string, *os.File, error) {
	cwd, err := s.fs.CheckURI(uri)
	if err != nil {
		return "", nil, err
	}
	if len(s.fs.Roots()) == 0 {
		return cwd, nil, nil
	}
	dir, err := s.fs.OpenDir(cwd)
	if err != nil {
		var refused *fsops.Error
		if errors.As(err, &refused) {
			return "", nil, err
		}
		return "", nil, procs.SpawnFailure(id, err)
	}
	return cwd, dir, nil
}
