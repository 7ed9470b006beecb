package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Directory names under $CODEX_HOME, Codex's own (codex-rs/rollout), so that
// rollouts land where Codex's tools look for them.
const (
	sessionsDir = "sessions"
	archivedDir = "archived_sessions"
	// indexDir is ours; Codex's state db lives elsewhere under the same
	// home, so a shared $CODEX_HOME is safe.
	indexDir  = "codexd"
	indexFile = "threads.sqlite"

	filePrefix = "rollout-"
	fileSuffix = ".jsonl"
	// fileTimeLayout is Codex's YYYY-MM-DDThh-mm-ss (no colons, so the name
	// is valid everywhere), in local time.
	fileTimeLayout = "2006-01-02T15-04-05"
	uuidLen        = 36
)

// canonicalID lowercases id and checks that it is a UUID in its 8-4-4-4-12
// form. Ids end up in file names, so nothing else may pass.
func canonicalID(id string) (string, error) {
	id = strings.ToLower(strings.TrimPrefix(id, "urn:uuid:"))
	if len(id) != uuidLen {
		return "", fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	for i := 0; i < uuidLen; i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", fmt.Errorf("%w: %q", ErrInvalidID, id)
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return "", fmt.Errorf("%w: %q", ErrInvalidID, id)
			}
		}
	}
	return id, nil
}

// newID is a thread id: a UUID version 7, whose first 48 bits are the
// creation time in milliseconds, so ids sort by creation time.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// rolloutName is the file name of a thread created at t (local time, as
// Codex names them).
func rolloutName(t time.Time, id string) string {
	return filePrefix + t.Local().Format(fileTimeLayout) + "-" + id + fileSuffix
}

// rolloutPath is where a thread created at t lives while not archived.
func rolloutPath(home string, t time.Time, id string) string {
	t = t.Local()
	return filepath.Join(home, sessionsDir, t.Format("2006"), t.Format("01"), t.Format("02"), rolloutName(t, id))
}

// parseRolloutName splits a rollout file name into its time (local) and
// thread id; ok is false for any other name.
func parseRolloutName(name string) (t time.Time, id string, ok bool) {
	if !strings.HasPrefix(name, filePrefix) || !strings.HasSuffix(name, fileSuffix) {
		return time.Time{}, "", false
	}
	core := name[len(filePrefix) : len(name)-len(fileSuffix)]
	if len(core) != len(fileTimeLayout)+1+uuidLen || core[len(fileTimeLayout)] != '-' {
		return time.Time{}, "", false
	}
	t, err := time.ParseInLocation(fileTimeLayout, core[:len(fileTimeLayout)], time.Local)
	if err != nil {
		return time.Time{}, "", false
	}
	id, err = canonicalID(core[len(fileTimeLayout)+1:])
	if err != nil || id != core[len(fileTimeLayout)+1:] {
		return time.Time{}, "", false
	}
	return t, id, true
}

// unarchivedPath is where an archived rollout goes back to: its day
// directory, from the time in its name.
func unarchivedPath(home, archivedPath string, created time.Time) string {
	name := filepath.Base(archivedPath)
	t, _, ok := parseRolloutName(name)
	if !ok {
		t = created.Local()
	}
	return filepath.Join(home, sessionsDir, t.Format("2006"), t.Format("01"), t.Format("02"), name)
}

// isArchivedPath reports whether path is in home's archived_sessions.
func isArchivedPath(home, path string) bool {
	return filepath.Dir(path) == filepath.Join(home, archivedDir)
}
