package store

import (
	"context"
	"path/filepath"

	"github.com/codexd/codexd/agent"
)

// Lazy is the Local store of a CODEX_HOME, opened on first use rather than
// at start-up: opening the SQLite index and rescanning the rollouts costs
// tens of milliseconds (more with many rollouts), and a server must answer
// initialize before any of it is needed. The first call of any method
// opens the store, as [Open] does; a failed open is returned to that call
// and tried again by the next one. Close closes the store if it was opened.
type Lazy struct {
	home string
	opts Options

	// sem is held (a token in it) while the store is opened or closed, so
	// that exactly one caller opens it; a waiter gives up when its context
	// ends. s and closed change only under it.
	sem    chan struct{}
	s      *Local
	closed bool
}

var _ Store = (*Lazy)(nil)

// OpenLazy returns the store of codexHome, to be opened on first use.
// It touches nothing on disk.
func OpenLazy(codexHome string, opts Options) (*Lazy, error) {
	home, err := filepath.Abs(codexHome)
	if err != nil {
		return nil, err
	}
	return &Lazy{home: home, opts: opts, sem: make(chan struct{}, 1)}, nil
}

// Home is the absolute CODEX_HOME the store keeps its files under.
func (l *Lazy) Home() string { return l.home }

// get returns the open store, opening it first if need be.
func (l *Lazy) get(ctx context.Context) (*Local, error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-l.sem }()
	if l.closed {
		return nil, ErrClosed
	}
	if l.s == nil {
		s, err := Open(ctx, l.home, l.opts)
		if err != nil {
			return nil, err
		}
		l.s = s
	}
	return l.s, nil
}

// Close closes the store if it was opened; later calls get ErrClosed. It
// waits for an open under way to end.
func (l *Lazy) Close() error {
	l.sem <- struct{}{}
	defer func() { <-l.sem }()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.s == nil {
		return nil
	}
	return l.s.Close()
}

func (l *Lazy) Create(ctx context.Context, meta ThreadMeta) (Writer, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, meta)
}

func (l *Lazy) Resume(ctx context.Context, id string) (*Thread, Writer, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.Resume(ctx, id)
}

func (l *Lazy) Read(ctx context.Context, id string) (*Thread, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Read(ctx, id)
}

func (l *Lazy) Info(ctx context.Context, id string) (agent.ThreadInfo, error) {
	s, err := l.get(ctx)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	return s.Info(ctx, id)
}

func (l *Lazy) List(ctx context.Context, q agent.ThreadQuery) (agent.ThreadPage, error) {
	s, err := l.get(ctx)
	if err != nil {
		return agent.ThreadPage{}, err
	}
	return s.List(ctx, q)
}

func (l *Lazy) Archive(ctx context.Context, id string) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.Archive(ctx, id)
}

func (l *Lazy) Unarchive(ctx context.Context, id string) (agent.ThreadInfo, error) {
	s, err := l.get(ctx)
	if err != nil {
		return agent.ThreadInfo{}, err
	}
	return s.Unarchive(ctx, id)
}

func (l *Lazy) SetName(ctx context.Context, id, name string) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return s.SetName(ctx, id, name)
}

func (l *Lazy) Fork(ctx context.Context, id string, meta ThreadMeta) (*Thread, Writer, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.Fork(ctx, id, meta)
}
