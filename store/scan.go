package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/codexd/codexd/agent"
)

// locate finds id's rollout: through the index, or else on disk (a rollout
// written while the index was unavailable), indexing what it finds.
func (s *Local) locate(ctx context.Context, id string) (string, error) {
	r, ok, err := s.ix.get(ctx, id)
	if err != nil {
		s.log.Warn("store: index lookup failed; searching the rollout directories", "thread", id, "err", err)
	}
	if ok && fileExists(r.info.Path) {
		return r.info.Path, nil
	}
	path := s.findFile(id)
	if path == "" {
		if ok {
			if err := s.ix.remove(ctx, id); err != nil {
				s.log.Warn("store: removing a stale index row failed", "thread", id, "err", err)
			}
		}
		return "", fmt.Errorf("%w: %s", agent.ErrThreadNotFound, id)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", notFoundIfMissing(id, err)
	}
	// With no row, one is only added: a writer may have recorded the
	// thread since (see putNew). A row with a stale path is replaced.
	if _, err := s.indexFile(ctx, path, fi, !ok); err != nil {
		return "", readError(id, err)
	}
	return path, nil
}

// findFile looks for id's rollout where Codex's layout puts it. id is a
// validated UUID, so it holds no pattern characters.
func (s *Local) findFile(id string) string {
	for _, pattern := range []string{
		filepath.Join(s.home, sessionsDir, "*", "*", "*", filePrefix+"*-"+id+fileSuffix),
		filepath.Join(s.home, archivedDir, filePrefix+"*-"+id+fileSuffix),
	} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if _, got, ok := parseRolloutName(filepath.Base(m)); ok && got == id {
				return m
			}
		}
	}
	return ""
}

// indexFile reads one rollout and records it in the index, returning the
// row; onlyNew leaves a row the index has for the thread as it is. A file that is not ours is recorded as foreign, and errForeign
// returned. A failing index is only logged: the row read from the file is
// still the answer.
func (s *Local) indexFile(ctx context.Context, path string, fi fs.FileInfo, onlyNew bool) (*row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res, err := readRollout(ctx, f, path, s.log, nil)
	if err == nil && res.legacy {
		// An earlier codexd's format: converted now (migrate.go), and read
		// again; if it cannot be yet, it is served as it is.
		f.Close()
		if merr := s.migrate(ctx, path); merr != nil {
			s.log.Warn("store: a legacy rollout was not converted", "path", path, "err", merr)
		}
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil {
			return nil, err
		}
		res, err = readRollout(ctx, f, path, s.log, nil)
	}
	if err == nil {
		if _, id, ok := parseRolloutName(filepath.Base(path)); !ok || id != res.meta.ID {
			s.log.Warn("store: a rollout's name does not match its thread id; ignoring it", "path", path, "thread", res.meta.ID)
			err = errForeign
		}
	}
	if errors.Is(err, errForeign) {
		if ferr := s.ix.putForeign(ctx, path, fi.Size(), fi.ModTime().UnixNano()); ferr != nil {
			s.log.Warn("store: index update failed", "path", path, "err", ferr)
		}
		return nil, errForeign
	}
	if err != nil {
		return nil, err
	}
	if h := s.testHookIndexRead; h != nil {
		h(path)
	}
	r := &row{info: res.info(s.home, path), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if res.meta != nil {
		r.startCwd = res.meta.Settings.Cwd
	}
	put := s.ix.put
	if onlyNew {
		put = s.ix.putNew
	}
	if err := put(ctx, r); err != nil {
		s.log.Warn("store: index update failed; a rescan will repair it", "path", path, "err", err)
	}
	return r, nil
}

// Rescan brings the index up to date with the rollout directories: files
// it does not know, or whose size or modification time changed, are read
// and indexed; rows whose file is gone are dropped. Threads with a writer
// in this store are skipped (their writer keeps their row). Open calls it;
// it reports how many files it read.
func (s *Local) Rescan(ctx context.Context) (int, error) {
	known, err := s.ix.stamps(ctx)
	if err != nil {
		return 0, err
	}
	foreign, err := s.ix.foreign(ctx)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	read := 0
	visit := func(path string, fi fs.FileInfo) error {
		_, id, ok := parseRolloutName(fi.Name())
		if !ok || !fi.Mode().IsRegular() {
			return nil
		}
		seen[path] = true
		size, mtime := fi.Size(), fi.ModTime().UnixNano()
		if st, ok := known[path]; ok && st.size == size && st.mtime == mtime {
			return nil
		}
		if st, ok := foreign[path]; ok && st.size == size && st.mtime == mtime {
			return nil
		}
		s.mu.Lock()
		_, open := s.writers[id]
		s.mu.Unlock()
		if open {
			return nil
		}
		read++
		_, err := s.indexFile(ctx, path, fi, false)
		if err != nil && !errors.Is(err, errForeign) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.log.Warn("store: could not index a rollout", "path", path, "err", err)
		}
		return nil
	}
	// Archived first: should a thread be in both places, the live copy
	// is indexed last and wins.
	if err := scanDir(filepath.Join(s.home, archivedDir), 0, visit); err != nil {
		return read, err
	}
	if err := scanDir(filepath.Join(s.home, sessionsDir), 3, visit); err != nil {
		return read, err
	}
	for path, st := range known {
		if seen[path] {
			continue
		}
		if r, ok, err := s.ix.get(ctx, st.id); err == nil && ok && r.info.Path == path {
			s.mu.Lock()
			_, open := s.writers[st.id]
			s.mu.Unlock()
			if !open {
				if err := s.ix.remove(ctx, st.id); err != nil {
					return read, err
				}
			}
		}
	}
	for path := range foreign {
		if !seen[path] {
			if err := s.ix.forgetForeign(ctx, path); err != nil {
				return read, err
			}
		}
	}
	return read, nil
}

// scanDir visits the regular files depth directories below dir (YYYY/MM/DD
// for sessions, none for archived_sessions). A missing dir is empty.
func scanDir(dir string, depth int, visit func(string, fs.FileInfo) error) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		if depth > 0 {
			if e.IsDir() {
				if err := scanDir(path, depth-1, visit); err != nil {
					return err
				}
			}
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		if err := visit(path, fi); err != nil {
			return err
		}
	}
	return nil
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
