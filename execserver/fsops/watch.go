package fsops

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/codexd/codexd/execproto"
)

// watchSet holds a connection's missing-path watches. A path is watched
// through its nearest existing ancestor directory; when that ancestor gains
// the next component the watch moves down to it, and when a watched path
// exists the watch fires once and is dropped.
type watchSet struct {
	svc    *Service
	notify NotifyFunc
	w      *fsnotify.Watcher
	kick   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	watches map[uint64][]string
	// armed maps each watched directory to the inode it was armed on: a
	// directory removed and made again under the same name needs a new
	// inotify watch, and its old one may never report anything.
	armed map[string]inode
}

type inode struct{ dev, ino uint64 }

func inodeOf(path string) (inode, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return inode{}, false
	}
	return inode{dev: uint64(st.Dev), ino: st.Ino}, true
}

// WatchMissing implements fs/watchMissing. It answers Watching: false when
// the id is in use or none of the paths can appear, and otherwise arms a
// watch that sends one fs/missingChanged through the connection's
// NotifyFunc when any of its paths comes into existence.
func (s *Service) WatchMissing(ctx context.Context, c *ConnState, p execproto.FsWatchMissingParams) (execproto.FsWatchMissingResponse, error) {
	// As in Codex 0.169, a watch is armed only when every path is missing
	// (a dangling symlink is there) and can still appear (its nearest
	// existing ancestor is a directory); watch id 0 is never armed.
	var paths []string
	watchable := p.WatchID != 0
	for _, uri := range p.Missing {
		t, err := s.locate(uri, true, true)
		if err != nil {
			return execproto.FsWatchMissingResponse{}, err
		}
		if _, err := t.link.lstat(); err == nil {
			watchable = false
			continue
		}
		if _, ok := nearestDir(t.path.abs); !ok {
			watchable = false
			continue
		}
		paths = append(paths, t.path.abs)
	}
	if !watchable {
		paths = nil
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return execproto.FsWatchMissingResponse{}, errConnClosed
	}
	ws := c.watches
	if ws != nil {
		ws.mu.Lock()
		_, dup := ws.watches[p.WatchID]
		n := len(ws.watches)
		ws.mu.Unlock()
		if dup {
			return execproto.FsWatchMissingResponse{Watching: false}, nil
		}
		if n >= s.maxWatch && len(paths) > 0 {
			return execproto.FsWatchMissingResponse{}, invalidRequest("at most %d missing-path watches may be active per connection", s.maxWatch)
		}
	}
	if len(paths) == 0 {
		return execproto.FsWatchMissingResponse{Watching: false}, nil
	}
	if ws == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return execproto.FsWatchMissingResponse{}, internal("cannot watch missing paths: %v", err)
		}
		ws = &watchSet{
			svc:     s,
			notify:  c.notify,
			w:       w,
			kick:    make(chan struct{}, 1),
			done:    make(chan struct{}),
			watches: make(map[uint64][]string),
			armed:   make(map[string]inode),
		}
		c.watches = ws
		go ws.run()
	}
	ws.mu.Lock()
	ws.watches[p.WatchID] = paths
	ws.mu.Unlock()
	// Arming happens on the watch goroutine, which checks the paths again
	// after the directories are watched, so an appearance in between is
	// still reported.
	select {
	case ws.kick <- struct{}{}:
	default:
	}
	return execproto.FsWatchMissingResponse{Watching: true}, nil
}

// nearestDir returns the nearest existing ancestor of p if it is a
// directory; otherwise p can never appear.
func nearestDir(p string) (string, bool) {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			return d, fi.IsDir()
		}
		if d == "/" {
			return "", false
		}
	}
}

// rescanInterval is the safety net under inotify: events can be lost (a
// watch added while its directory is being removed is never told of it; the
// queue can overflow), so every watch is also re-checked this often.
const rescanInterval = time.Second

func (ws *watchSet) run() {
	defer close(ws.done)
	tick := time.NewTicker(rescanInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ws.kick:
		case ev, ok := <-ws.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				// The kernel drops the watch of a directory that goes away.
				ws.mu.Lock()
				if _, ok := ws.armed[ev.Name]; ok {
					delete(ws.armed, ev.Name)
					_ = ws.w.Remove(ev.Name)
				}
				ws.mu.Unlock()
			}
		case _, ok := <-ws.w.Errors:
			// An overflow loses events: re-checking every path below
			// recovers from it.
			if !ok {
				return
			}
		}
		for _, id := range ws.rearm() {
			if ws.notify != nil {
				ws.notify(execproto.FsMissingChangedNotification{WatchID: id})
			}
		}
	}
}

// rearm fires the watches whose paths exist and moves the inotify watches
// to the nearest existing ancestors of the rest.
func (ws *watchSet) rearm() []uint64 {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var fired []uint64
	// A directory that appears while watches are being added is caught by
	// the next pass; the bound only stops a directory that keeps coming and
	// going from holding the goroutine.
	for pass := 0; pass < 16; pass++ {
		desired := make(map[string]bool)
		for id, paths := range ws.watches {
			appeared := false
			for _, p := range paths {
				if _, err := os.Lstat(p); err == nil && ws.inRoots(p) {
					appeared = true
					break
				}
			}
			if appeared {
				delete(ws.watches, id)
				fired = append(fired, id)
				continue
			}
			for _, p := range paths {
				if d, ok := nearestDir(p); ok {
					desired[d] = true
				}
			}
		}
		for d, was := range ws.armed {
			if now, ok := inodeOf(d); !desired[d] || !ok || now != was {
				_ = ws.w.Remove(d)
				delete(ws.armed, d)
			}
		}
		added := false
		for d := range desired {
			if _, ok := ws.armed[d]; ok {
				continue
			}
			id, ok := inodeOf(d)
			if !ok {
				continue
			}
			if err := ws.w.Add(d); err == nil {
				ws.armed[d] = id
				added = true
			}
		}
		if !added {
			break
		}
	}
	return fired
}

func (ws *watchSet) close() {
	_ = ws.w.Close()
	<-ws.done
}

// inRoots reports whether p, resolved now, is still inside the roots.
func (ws *watchSet) inRoots(p string) bool {
	r, err := resolvePath(p, true)
	return err == nil && ws.svc.confine(p, r) == nil
}
