package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Rollouts that an earlier codexd wrote in its own format (legacy_line.go)
// are converted to Codex's when the store first reads them (an index of an
// earlier schema is rebuilt, so every file is read at the first Open):
//
//  1. the original is locked and read; its records are encoded in Codex's
//     format into rollout-….jsonl.codexd-migrating beside it, synced;
//  2. the conversion is verified: the new file is read back and its
//     records must encode to exactly the bytes written (the same records,
//     in order, none lost);
//  3. only then is the original linked to rollout-….jsonl.codexd-v1, the
//     new file renamed over it, the directory synced, and the -v1 copy
//     removed. A failure at any step leaves the original in place (and
//     the -v1 copy, if the swap was under way), and is retried at the next
//     Open.
//
// Neither extra name matches a rollout's, so no scan takes them for one.

const (
	migratingSuffix = ".codexd-migrating"
	legacySuffix    = ".codexd-v1"
)

// errBusyMigrating: the legacy rollout is locked by a writer (another
// process); it is converted at a later Open.
var errBusyMigrating = errors.New("store: a legacy rollout is in use; not converted yet")

// migrate converts the legacy rollout at path to Codex's format, in place.
func (s *Local) migrate(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		if errors.Is(err, ErrThreadBusy) {
			return errBusyMigrating
		}
		return err
	}
	var recs []Record
	res, err := readRollout(ctx, f, path, s.log, func(_ []byte, e *entry) {
		recs = append(recs, Record{Time: e.Time, TurnID: e.TurnID, Event: e.Event, Model: e.Model, store: e.Store})
	})
	if err != nil {
		return err
	}
	if !res.legacy {
		return nil
	}
	want, err := encodeRollout(*res.meta, recs)
	if err != nil {
		return fmt.Errorf("store: converting %s: %w", path, err)
	}
	tmp := path + migratingSuffix
	os.Remove(tmp) // a conversion cut short before
	if err := writeSynced(tmp, want); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := verifyConversion(ctx, s, tmp, want); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: the conversion of %s did not verify, keeping the original: %w", path, err)
	}
	backup := path + legacySuffix
	os.Remove(backup)
	if err := os.Link(path, backup); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		os.Remove(backup)
		return err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return err // the -v1 copy stays until a sync succeeds
	}
	s.log.Info("store: converted a rollout to Codex's format", "path", path, "records", len(recs))
	return os.Remove(backup)
}

// encodeRollout is a whole rollout in Codex's format.
func encodeRollout(meta ThreadMeta, recs []Record) ([]byte, error) {
	buf, err := encodeMetaLine(nil, meta)
	if err != nil {
		return nil, err
	}
	lc := lineCtx{thread: meta.ID, ordinal: 1}
	for _, r := range recs {
		if buf, err = encodeLine(buf, r, r.Time, &lc); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// verifyConversion reads the converted file back and checks that its
// records encode to exactly want.
func verifyConversion(ctx context.Context, s *Local, path string, want []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var recs []Record
	res, err := readRollout(ctx, f, path, s.log, func(_ []byte, e *entry) {
		recs = append(recs, Record{Time: e.Time, TurnID: e.TurnID, Event: e.Event, Model: e.Model, store: e.Store})
	})
	if err != nil {
		return err
	}
	if res.legacy || res.skipped > 0 {
		return fmt.Errorf("%d lines did not read back", res.skipped)
	}
	got, err := encodeRollout(*res.meta, recs)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("the records read back differ from those written")
	}
	return nil
}

// writeSynced creates path (it must not exist) with b, synced.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
