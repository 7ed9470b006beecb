package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/codexd/codexd/agent"
)

// dirEntries lists what is directly under dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

func TestLazyOpensOnFirstUseAndKeepsWhatLocalKeeps(t *testing.T) {
	home := t.TempDir()
	l, err := OpenLazy(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, home); len(got) != 0 {
		t.Fatalf("OpenLazy touched the disk: %v", got)
	}
	id := testID(1)
	w, err := l.Create(bg, meta(id, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, indexDir, indexFile)); err != nil {
		t.Fatalf("the first call did not open the index: %v", err)
	}
	mustAppend(t, w, turnRecords("t1", 10, "hello lazy")...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.SetName(bg, id, "named"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(bg, agent.ThreadQuery{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("List after Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// Another start finds the thread with every method of the Store.
	l, err = OpenLazy(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p, err := l.List(bg, agent.ThreadQuery{})
	if err != nil || len(p.Threads) != 1 || p.Threads[0].ID != id || p.Threads[0].Name != "named" {
		t.Fatalf("List: %+v %v", p.Threads, err)
	}
	if info, err := l.Info(bg, id); err != nil || info.Preview != "hello lazy" {
		t.Fatalf("Info: %+v %v", info, err)
	}
	if th, err := l.Read(bg, id); err != nil || len(th.Turns) != 1 {
		t.Fatalf("Read: %+v %v", th, err)
	}
	_, w, err = l.Resume(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fid := testID(2)
	_, fw, err := l.Fork(bg, id, meta(fid, 100))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Archive(bg, id); err != nil {
		t.Fatal(err)
	}
	if info, err := l.Unarchive(bg, id); err != nil || info.ID != id {
		t.Fatalf("Unarchive: %+v %v", info, err)
	}
}

func TestLazyCloseBeforeUseLeavesNothing(t *testing.T) {
	home := t.TempDir()
	l, err := OpenLazy(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(bg, meta(testID(1), 0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Create after Close: %v", err)
	}
	if got := dirEntries(t, home); len(got) != 0 {
		t.Fatalf("a store closed unused left %v", got)
	}
}

func TestLazyRetriesAFailedOpen(t *testing.T) {
	home := t.TempDir()
	// A file where the index's directory goes makes the open fail.
	block := filepath.Join(home, indexDir)
	if err := os.WriteFile(block, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLazy(home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.List(bg, agent.ThreadQuery{}); err == nil {
		t.Fatal("List opened a store whose index directory is a file")
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(bg, agent.ThreadQuery{}); err != nil {
		t.Fatalf("List after the cause went away: %v", err)
	}
}

func TestLazyWaiterGivesUpWithItsContext(t *testing.T) {
	l, err := OpenLazy(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.sem <- struct{}{} // an open under way
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := l.List(ctx, agent.ThreadQuery{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("List while another opens, its context done: %v", err)
	}
	<-l.sem
	if _, err := l.List(bg, agent.ThreadQuery{}); err != nil {
		t.Fatal(err)
	}
}

func TestLazyConcurrentFirstUseOpensOnce(t *testing.T) {
	l, err := OpenLazy(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	got := make([]*Local, 8)
	errs := make([]error, len(got))
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = l.get(bg)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("caller %d got %p, %v; caller 0 got %p", i, got[i], errs[i], got[0])
		}
	}
}
