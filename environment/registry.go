package environment

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	// StatusReady: local, or a remote whose connection is up.
	StatusReady Status = "ready"
	// StatusPending: never connected (lazy) or its first connection is
	// still being made, and no failure seen.
	StatusPending Status = "pending"
	// StatusDisconnected: a connection attempt failed or the connection
	// dropped; the detail says why. Later use may recover it.
	StatusDisconnected Status = "disconnected"
	// StatusUnknown: no environment has this id.
	StatusUnknown Status = "unknown"
)

// ErrUnknown: no environment has this id.
var ErrUnknown = errors.New("unknown environment id")

// ErrInsecureToken: environment/add was given a bearer token for a URL
// that would send it in clear to another machine.
var ErrInsecureToken = errors.New("exec-server WebSocket headers require wss:// or a loopback destination")

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
	// `local` environment. The registry owns it (Close closes it).
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
	ctx  context.Context // ends at Close: background connections stop
	stop context.CancelFunc
	wg   sync.WaitGroup // background connections

	mu       sync.Mutex
	envs     map[string]*env
	retired  []*env // replaced by Add while threads may still use them
	watchers map[int]func(Event)
	nextW    int
	closed   bool
}

// env is one environment: its connector and its shared client.
type env struct {
	id, url string
	conn    *execclient.Connector // nil when the URL cannot be dialled
	urlErr  error                 // why conn is nil
	sem     chan struct{}         // held while the client is checked or made
	// ctx ends when the registry closes or an environment/add replaces
	// this environment: its background work (renewing a lost session)
	// stops then. Clients threads hold live on until Close.
	ctx  context.Context
	stop context.CancelFunc

	mu         sync.Mutex
	client     *execclient.Client
	connecting bool
	err        error // the last failure seen (dial, drop, lost session)
	// lost: the last client's session was lost (the exec-server restarted,
	// or every resume failed); the next fresh session is announced.
	lost bool
}

// New returns a registry with Local (if any) and no remote.
func New(o Options) *Registry {
	ctx, stop := context.WithCancel(context.Background())
	r := &Registry{opts: o, ctx: ctx, stop: stop, envs: map[string]*env{}, watchers: map[int]func(Event){}}
	if o.Local != nil {
		r.envs[LocalID] = r.newEnv(LocalID, o.Local.URL())
		r.envs[LocalID].conn = o.Local
	}
	return r
}

func (r *Registry) newEnv(id, url string) *env {
	e := &env{id: id, url: url, sem: make(chan struct{}, 1)}
	e.ctx, e.stop = context.WithCancel(r.ctx)
	return e
}

// FromFile returns a registry with local (unless the file leaves it out)
// and the file's remotes, none of them connected yet.
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

// Add registers a remote environment, or replaces the one of that id, as
// Codex's environment/add upserts. Nothing is dialled (see Start). As in
// Codex, only an empty or reserved id and a token sent in clear are
// refused here; a URL that cannot be dialled is accepted and its
// environment reports the failure (status disconnected).
func (r *Registry) Add(p AddParams) error {
	switch {
	case p.ID == "":
		return errors.New("environment id cannot be empty")
	case p.ID == LocalID:
		return fmt.Errorf("environment id `%s` is reserved for EnvironmentManager", p.ID)
	}
	opts := r.opts.Client
	opts.BearerToken = p.BearerToken
	if p.ConnectTimeout > 0 {
		opts.DialTimeout = p.ConnectTimeout
	}
	if opts.ClientName == "" {
		opts.ClientName = "codexd-core"
	}
	e := r.newEnv(p.ID, p.URL)
	opts.OnDisconnect = func(err error) { r.dropped(e, err) }
	opts.OnReconnect = func(_ int, err error) {
		if err == nil {
			r.resumed(e)
		}
	}
	conn, err := execclient.URLConnector(strings.TrimSpace(p.URL), opts)
	switch {
	case errors.Is(err, execclient.ErrInsecureToken):
		return ErrInsecureToken
	case err != nil:
		e.urlErr = err
	}
	e.conn = conn
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		e.stop()
		return execclient.ErrClientClosed
	}
	if old := r.envs[p.ID]; old != nil {
		// Threads may hold its client: it lives until Close. Its
		// background work stops now.
		old.stop()
		r.retired = append(r.retired, old)
	}
	r.envs[p.ID] = e
	return nil
}

// Start connects id in the background if it has no live client and no
// connection is under way (environment/add does, as Codex starts an added
// environment at once). Unknown ids are ignored.
func (r *Registry) Start(id string) {
	e := r.get(id)
	if e == nil {
		return
	}
	e.mu.Lock()
	busy := e.connecting || (e.client != nil && e.client.Connected())
	e.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if busy || r.closed {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_, _ = r.client(r.ctx, e)
	}()
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
	return e != nil && e.url != ""
}

func (r *Registry) get(id string) *env {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.envs[id]
}

func unknown(id string) error { return fmt.Errorf("%w `%s`", ErrUnknown, id) }

// Client returns id's client, connecting if it has none or its last one
// ended. A failed connection's error is the reason status reports.
func (r *Registry) Client(ctx context.Context, id string) (*execclient.Client, error) {
	e := r.get(id)
	if e == nil {
		return nil, unknown(id)
	}
	return r.client(ctx, e)
}

func (r *Registry) client(ctx context.Context, e *env) (*execclient.Client, error) {
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to environment `%s`: %w", e.id, ctx.Err())
	}
	defer func() { <-e.sem }()
	e.mu.Lock()
	c := e.client
	e.mu.Unlock()
	if c != nil {
		select {
		case <-c.Done():
			// The session is gone for good (its TTL passed, or resume
			// gave up): the next use starts a new one.
			c.Close()
			e.mu.Lock()
			e.client = nil
			e.mu.Unlock()
		default:
			return c, nil
		}
	}
	if e.urlErr != nil {
		err := e.connectErr(e.urlErr)
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
		return nil, err
	}
	e.mu.Lock()
	e.connecting = true
	e.mu.Unlock()
	c, err := e.conn.Connect(ctx)
	e.mu.Lock()
	e.connecting = false
	if err != nil {
		e.err = e.connectErr(err)
		e.mu.Unlock()
		return nil, e.err
	}
	if !r.watchClient(e, c) {
		e.mu.Unlock()
		c.Close()
		return nil, execclient.ErrClientClosed
	}
	e.client, e.err = c, nil
	renewed := e.lost
	e.lost = false
	e.mu.Unlock()
	if renewed {
		// A fresh session replaces the lost one: the threads on this
		// environment hear it is back, as after a resume.
		r.emit(Event{ID: e.id, Connected: true})
	}
	return c, nil
}

// watchClient waits in the background for c to end. If its session was
// lost (not closed by the registry), the registry opens a fresh one by
// itself, so that the environment comes back without waiting for a turn
// to ask. False means the registry is closed (nothing was started).
func (r *Registry) watchClient(e *env, c *execclient.Client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		select {
		case <-e.ctx.Done(): // the registry closed, or e was replaced
			return
		case <-c.Done():
		}
		if !errors.Is(c.Err(), execclient.ErrSessionLost) {
			return
		}
		e.mu.Lock()
		e.lost = true
		e.mu.Unlock()
		r.renew(e)
	}()
	return true
}

// renew connects e afresh, retrying with backoff (100ms doubling up to 5s)
// until it succeeds, the registry closes or e is replaced. Each attempt
// is one dial bounded by the client's DialTimeout.
func (r *Registry) renew(e *env) {
	backoff := 100 * time.Millisecond
	for {
		if _, err := r.client(e.ctx, e); err == nil || e.ctx.Err() != nil {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-e.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (e *env) connectErr(err error) error {
	if e.url == "" {
		return fmt.Errorf("exec-server connection attempt failed: %w", err)
	}
	return fmt.Errorf("exec-server connection attempt failed: failed to connect to exec-server websocket `%s`: %w", e.url, err)
}

// StatusOf reports id's connection as it stands, starting or recovering
// nothing; detail says why for disconnected and unknown.
func (r *Registry) StatusOf(id string) (st Status, detail string) {
	e := r.get(id)
	if e == nil {
		return StatusUnknown, unknown(id).Error()
	}
	if e.url == "" {
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
	err = fmt.Errorf("environment `%s` disconnected: %w", e.id, err)
	e.mu.Lock()
	e.err = err
	e.mu.Unlock()
	r.emit(Event{ID: e.id, Err: err})
}

func (r *Registry) resumed(e *env) {
	e.mu.Lock()
	e.err = nil
	e.mu.Unlock()
	r.emit(Event{ID: e.id, Connected: true})
}

// Close stops background connections and closes every client and the
// local server.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	envs := append([]*env(nil), r.retired...)
	for _, e := range r.envs {
		envs = append(envs, e)
	}
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
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
		if e.conn != nil {
			errs = append(errs, e.conn.Close())
		}
		<-e.sem
	}
	return errors.Join(errs...)
}
