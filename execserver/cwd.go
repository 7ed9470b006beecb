package execserver

import (
	"errors"
	"os"

	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/execserver/procs"
)

// openCwd opens, under roots, a process's cwd (already checked with
// CheckURI) through them, and the child is started in that directory
// (procs.StartOptions.CwdDir): a component swapped for a symlink after the
// check cannot move the child outside the roots. Without roots it returns
// nil: the path is used as it is.
func (s *Server) openCwd(id, cwd string) (*os.File, error) {
	if len(s.fs.Roots()) == 0 {
		return nil, nil
	}
	dir, err := s.fs.OpenDir(cwd)
	if err != nil {
		var refused *fsops.Error
		if errors.As(err, &refused) {
			return nil, err
		}
		return nil, procs.SpawnFailure(id, err)
	}
	return dir, nil
}
