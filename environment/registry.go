package environment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execproto"
)

// LocalID is the id of the exec-server inside this process.
const LocalID = "local"

// Status is what environment/status reports.
type Status string

// Statuses, in Codex's names.
const (
	StatusReady        Status = "ready"
	StatusPending      Status = "pending"
	StatusDisconnected Status = "disconnected"
	StatusUnknown      Status = "unknown"
)

// ErrUnknown: no environment has this id.
var ErrUnknown = errors.New("unknown environment")

// Event reports a change of an environment's connection: Connected false
// when it dropped (Err says why), true when the session was resumed.
type Event struct {
	ID        string
	Connected bool
	Err       error
}

// Options configure a Registry.
type Options struct {
	// Local is the in-process exec-server's connector; nil means no
	// `local` environment.
	Local *execclient.Connector
	// Default is the environment of a thread that names none: "" is
	// `local` (or none without Local), "none" none.
	Default string
	// Client are the options of remote clients (ClientName, reconnect
	// bounds); their hooks are the registry's.
	Client execclient.Options
}

// Registry holds the environments. Its methods are safe for concurrent use.
type Registry struct {
	opts Options

	mu       sync.Mutex
	envs     map[string]*env
	watchers map[int]func(Event)
	nextW    int
	closed   bool
}

// env is one environment: its connector and its shared client.
type env struct {
	id     string
	conn   *execclient.Connector
	sem    chan struct{} // held while the client is checked or made
	mu     sync.Mutex
	client *execclient.Client
	err    error // the last failure seen (dial, drop, lost session)
}

// New returns a registry with Local (if any) and no remote.
func New(o Options) *Registry {
	r := &Registry{opts: o, envs: map[string]*env{}, watchers: map[int]func(Event){}}
	if o.Local != nil {
		r.envs[LocalID] = &env{id: LocalID, conn: o.Local, sem: make(chan struct{}, 1)}
	}
	return r
}

// FromFile returns a registry with local (unless the file leaves it out)
// and the file's remotes.
func FromFile(f File, local *execclient.Connector, client execclient.Options) (*Registry, error) {
	if !f.IncludeLocal {
		if local != nil {
			_ = local.Close()
		}
		local = nil
	}
	r := New(Options{Local: local, Default: f.Default, Client: client})
	for _, rm := range f.Remotes {
		if err := r.Add(AddParams{ID: rm.ID, URL: rm.URL, ConnectTimeout: rm.ConnectTimeout}); err != nil {
			_ = r.Close()
			return nil, err
		}
	}
	return r, nil
}

// AddParams are environment/add's.
type AddParams struct {
	ID, URL string
	// BearerToken is sent on every (re)connection; only over wss://, a
	// Unix socket or to a loopback address.
	BearerToken    string
	ConnectTimeout time.Duration
}

// Add registers (or replaces, when idle) a remote environment. Nothing is
// dialled until a thread uses it.
func (r *Registry) Add(p AddParams) error {
	if err := ValidateID(p.ID); err != nil {
		return err
	}
	if err := ValidateURL(p.URL); err != nil {
		return err
	}
	opts := r.opts.Client
	opts.BearerToken = p.BearerToken
	if p.ConnectTimeout > 0 {
		opts.DialTimeout = p.ConnectTimeout
	}
	e := &env{id: p.ID, sem: make(chan struct{}, 1)}
	opts.OnDisconnect = func(err error) { r.dropped(e, err) }
	opts.OnReconnect = func(_ int, err error) {
		if err == nil {
			r.resumed(e)
		}
	}
	conn, err := execclient.URLConnector(p.URL, opts)
	if err != nil {
		return err
	}
	e.conn = conn
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return execclient.ErrClientClosed
	}
	if old := r.envs[p.ID]; old != nil {
		old.mu.Lock()
		busy := old.client != nil
		old.mu.Unlock()
		if busy {
			return fmt.Errorf("environment `%s` is already configured and connected", p.ID)
		}
	}
	r.envs[p.ID] = e
	return nil
}

// DefaultID is the environment of a thread that names none ("" for none).
func (r *Registry) DefaultID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch d := r.opts.Default; {
	case d == "none":
		return ""
	case d != "":
		return d
	case r.envs[LocalID] != nil:
		return LocalID
	}
	return ""
}

// IDs lists the environments, local first.
func (r *Registry) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.envs))
	for id := range r.envs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if (ids[i] == LocalID) != (ids[j] == LocalID) {
			return ids[i] == LocalID
		}
		return ids[i] < ids[j]
	})
	return ids
}

// Has reports whether id is configured.
func (r *Registry) Has(id string) bool { return r.get(id) != nil }

// Remote reports whether id is an exec-server reached by URL.
func (r *Registry) Remote(id string) bool {
	e := r.get(id)
	return e != nil && e.conn.Remote()
}

func (r *Registry) get(id string) *env {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.envs[id]
}

// Client returns id's client, connecting if it has none or its last one
// ended. The error of a failed connection names the environment.
func (r *Registry) Client(ctx context.Context, id string) (*execclient.Client, error) {
	e := r.get(id)
	if e == nil {
		return nil, fmt.Errorf("%w `%s`", ErrUnknown, id)
	}
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to environment `%s`: %w", id, ctx.Err())
	}
	defer func() { <-e.sem }()
	e.mu.Lock()
	c := e.client
	e.mu.Unlock()
	if c != nil {
		select {
		case <-c.Done():
			c.Close()
			e.mu.Lock()
			e.client = nil
			e.mu.Unlock()
		default:
			return c, nil
		}
	}
	c, err := e.conn.Connect(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.err = err
		return nil, fmt.Errorf("environment `%s` is unreachable: %w", id, err)
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		c.Close()
		return nil, execclient.ErrClientClosed
	}
	e.client, e.err = c, nil
	return c, nil
}

// StatusOf reports id's connection as it stands, starting or recovering
// nothing; detail says why for disconnected and unknown.
func (r *Registry) StatusOf(id string) (st Status, detail string) {
	e := r.get(id)
	if e == nil {
		return StatusUnknown, fmt.Sprintf("environment `%s` is not configured", id)
	}
	if !e.conn.Remote() {
		return StatusReady, ""
	}
	e.mu.Lock()
	c, err := e.client, e.err
	e.mu.Unlock()
	switch {
	case c != nil && c.Connected():
		return StatusReady, ""
	case c != nil && c.Err() != nil:
		return StatusDisconnected, c.Err().Error()
	case err != nil:
		return StatusDisconnected, err.Error()
	case c != nil:
		return StatusDisconnected, "the connection dropped; resuming the session"
	}
	return StatusPending, ""
}

// Info is environment/info: what the exec-server reports of its machine
// (it connects if needed).
func (r *Registry) Info(ctx context.Context, id string) (execproto.EnvironmentInfo, error) {
	c, err := r.Client(ctx, id)
	if err != nil {
		return execproto.EnvironmentInfo{}, err
	}
	return c.EnvironmentInfo(), nil
}

// Watch calls fn with every connection event until the returned stop is
// called. fn must not block.
func (r *Registry) Watch(fn func(Event)) (stop func()) {
	r.mu.Lock()
	id := r.nextW
	r.nextW++
	r.watchers[id] = fn
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.watchers, id)
		r.mu.Unlock()
	}
}

func (r *Registry) emit(ev Event) {
	r.mu.Lock()
	ws := make([]func(Event), 0, len(r.watchers))
	for _, w := range r.watchers {
		ws = append(ws, w)
	}
	r.mu.Unlock()
	for _, w := range ws {
		w(ev)
	}
}

func (r *Registry) dropped(e *env, err error) {
	if err == nil {
		err = errors.New("the connection closed")
	}
	e.mu.Lock()
	e.err = err
	e.mu.Unlock()
	r.emit(Event{ID: e.id, Err: fmt.Errorf("environment `%s` disconnected: %w", e.id, err)})
}

func (r *Registry) resumed(e *env) {
	e.mu.Lock()
	e.err = nil
	e.mu.Unlock()
	r.emit(Event{ID: e.id, Connected: true})
}

// Close closes every client and the local server.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	envs := make([]*env, 0, len(r.envs))
	for _, e := range r.envs {
		envs = append(envs, e)
	}
	r.mu.Unlock()
	var errs []error
	for _, e := range envs {
		e.sem <- struct{}{}
		e.mu.Lock()
		c := e.client
		e.client = nil
		e.mu.Unlock()
		if c != nil {
			c.Close()
		}
		errs = append(errs, e.conn.Close())
		<-e.sem
	}
	return errors.Join(errs...)
}
