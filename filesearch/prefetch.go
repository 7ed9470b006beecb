package filesearch

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// listing is what reading one directory gives the walk.
type listing struct {
	id       devIno
	idOK     bool
	err      error    // it could not be listed
	ents     []dirent // in name order; dangling links left out
	patterns []gitignore.Pattern
	domain   []string // the directory's path, as ignore patterns take it
}

// rawEnt is a name as the directory lists it, with its type if known.
type rawEnt struct {
	name string
	kind uint8
}

const (
	kindOther   uint8 = iota // a file, device, socket...
	kindDir                  // a directory
	kindLink                 // a symbolic link
	kindUnknown              // the file system did not say
)

// readEntriesPortable is readEntries by os.File.ReadDir.
func readEntriesPortable(f *os.File) ([]rawEnt, error) {
	des, err := f.ReadDir(-1)
	out := make([]rawEnt, 0, len(des))
	for _, de := range des {
		k := uint8(kindOther)
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			k = kindLink
		case de.IsDir():
			k = kindDir
		}
		out = append(out, rawEnt{name: de.Name(), kind: k})
	}
	return out, err
}

type dirent struct {
	name  string
	isDir bool // a link counts as what it points to
}

// readListing reads directory abs: its identity, its entries and its
// ignore files (and, for a root, the repository's excludes).
func readListing(abs string, root bool) listing {
	var l listing
	var des []rawEnt
	var err error
	l.id, l.idOK, des, err = listDir(abs)
	if err != nil && len(des) == 0 {
		l.err = err
		return l
	}
	slices.SortFunc(des, func(a, b rawEnt) int { return strings.Compare(a.name, b.name) })
	l.domain = splitPath(abs)
	has := map[string]bool{}
	l.ents = make([]dirent, 0, len(des))
	for _, de := range des {
		name := de.name
		isDir := de.kind == kindDir
		switch de.kind {
		case kindLink, kindUnknown:
			stat := os.Stat // a link counts as what it points to
			if de.kind == kindUnknown {
				stat = os.Lstat
			}
			st, err := stat(joinAbs(abs, name))
			if err != nil {
				continue // a dangling link is no file
			}
			if de.kind == kindUnknown && st.Mode()&fs.ModeSymlink != 0 {
				if st, err = os.Stat(joinAbs(abs, name)); err != nil {
					continue
				}
			}
			isDir = st.IsDir()
		}
		if name == ".gitignore" || name == ".ignore" || name == ".git" {
			has[name] = true
		}
		l.ents = append(l.ents, dirent{name: name, isDir: isDir})
	}
	// Only ignore files the listing holds are opened: most directories
	// have none, and a failed open is a system call per name.
	for _, name := range ignoreFiles {
		if has[name] {
			l.patterns = append(l.patterns, readPatterns(filepath.Join(abs, name), l.domain)...)
		}
	}
	if root && has[".git"] {
		// A repository's own excludes, when the root is its top.
		l.patterns = append(l.patterns, readPatterns(filepath.Join(abs, ".git", "info", "exclude"), l.domain)...)
	}
	return l
}

// prefetcher reads directories the walk has decided to enter, on other
// cores, before the walk gets to them. The walk takes each listing once:
// one already read is handed over, one being read is waited for, and one
// not yet started the walk reads itself, so the walk never waits on a
// queue.
type prefetcher struct {
	ctx     context.Context
	mu      sync.Mutex
	slots   map[string]*slot
	queue   []string
	wake    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	readers int
}

type slot struct {
	claimed bool
	ready   chan struct{} // closed when l is read
	l       listing
}

// newPrefetcher starts n readers; with none, take reads every listing.
func newPrefetcher(ctx context.Context, n int) *prefetcher {
	pf := &prefetcher{ctx: ctx, slots: map[string]*slot{}, wake: make(chan struct{}, 1), done: make(chan struct{}), readers: min(n, 7)}
	for i := 0; i < pf.readers; i++ {
		pf.wg.Add(1)
		go pf.read()
	}
	return pf
}

// stop ends the readers and waits for them.
func (pf *prefetcher) stop() {
	close(pf.done)
	pf.wg.Wait()
}

// want queues directories for the readers.
func (pf *prefetcher) want(dirs []string) {
	if pf.readers == 0 || len(dirs) == 0 {
		return
	}
	pf.mu.Lock()
	for _, d := range dirs {
		if pf.slots[d] == nil {
			pf.slots[d] = &slot{ready: make(chan struct{})}
			pf.queue = append(pf.queue, d)
		}
	}
	pf.mu.Unlock()
	select {
	case pf.wake <- struct{}{}:
	default:
	}
}

// take is the listing of abs, read by a reader or here.
func (pf *prefetcher) take(abs string, root bool) listing {
	pf.mu.Lock()
	s := pf.slots[abs]
	delete(pf.slots, abs)
	if s == nil || !s.claimed {
		if s != nil {
			s.claimed = true // a reader that pops it leaves it
		}
		pf.mu.Unlock()
		return readListing(abs, root)
	}
	pf.mu.Unlock()
	<-s.ready
	return s.l
}

func (pf *prefetcher) read() {
	defer pf.wg.Done()
	for {
		pf.mu.Lock()
		var abs string
		var s *slot
		for len(pf.queue) > 0 && s == nil {
			abs, pf.queue = pf.queue[0], pf.queue[1:]
			if c := pf.slots[abs]; c != nil && !c.claimed {
				s = c
				s.claimed = true
			}
		}
		if len(pf.queue) == 0 {
			pf.queue = nil // let the backing array go
		}
		pf.mu.Unlock()
		if s != nil {
			s.l = readListing(abs, false)
			close(s.ready)
			continue
		}
		select {
		case <-pf.wake:
		case <-pf.done:
			return
		case <-pf.ctx.Done():
			return
		}
	}
}
