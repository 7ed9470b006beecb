package execclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
)

// Defaults of Options.
const (
	DefaultClientName          = "codexd-execclient"
	DefaultReconnectAttempts   = 10
	DefaultReconnectBackoff    = 50 * time.Millisecond
	DefaultReconnectMaxBackoff = 2 * time.Second
	// DefaultReconnectTimeout stays below the server's default session TTL
	// (30s), after which resuming is pointless.
	DefaultReconnectTimeout  = 20 * time.Second
	DefaultMaxBufferedOutput = 1 << 20
	DefaultDialTimeout       = 10 * time.Second
)

// Errors of the client, for errors.Is.
var (
	// ErrClientClosed: Close was called.
	ErrClientClosed = errors.New("execclient: client closed")
	// ErrSessionLost: the connection dropped and the session could not be
	// resumed (the server forgot it, or every redial failed).
	ErrSessionLost = errors.New("execclient: connection lost and session not resumed")
	// ErrOutputLost: output was evicted from the server's ring before the
	// client could fetch it; the readers saw the rest.
	ErrOutputLost = errors.New("execclient: some process output was lost")
	// ErrStdinClosed: the process was started without PipeStdin or TTY.
	ErrStdinClosed = errors.New("execclient: process stdin is closed")
	// ErrUnknownProcess: the server does not know the process (any more).
	ErrUnknownProcess = errors.New("execclient: unknown process")
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// ClientName is sent in initialize (default DefaultClientName).
	ClientName string
	// BearerToken, when set, is sent as "Authorization: Bearer <token>" on
	// WebSocket upgrades.
	BearerToken string
	// Header holds extra HTTP headers for WebSocket upgrades.
	Header http.Header
	// MaxMessage limits one inbound message (default
	// jsonrpc.DefaultMaxMessage).
	MaxMessage int64
	// DialTimeout bounds one dial plus handshake (default 10s).
	DialTimeout time.Duration

	// ReconnectAttempts bounds the redials after a dropped connection
	// (default 10); a negative value disables resuming.
	ReconnectAttempts int
	// ReconnectBackoff is the wait before the second attempt, doubled after
	// each failure up to ReconnectMaxBackoff (defaults 50ms and 2s). The
	// first attempt is immediate.
	ReconnectBackoff    time.Duration
	ReconnectMaxBackoff time.Duration
	// ReconnectTimeout bounds the whole resume (default 20s); keep it below
	// the server's session TTL.
	ReconnectTimeout time.Duration

	// MaxBufferedOutput bounds, per process, the output held for readers
	// (stdout and stderr together; default 1 MiB), give or take one chunk
	// (at most 8 KiB). See the package doc.
	MaxBufferedOutput int

	// OnDisconnect, when set, is called when the connection drops, before
	// the client tries to resume, with why it dropped. It must not block.
	OnDisconnect func(err error)
	// OnReconnect, when set, is called after each resume attempt with its
	// number (from 1) and its error (nil on success); a success is
	// announced once the new connection is in use, so Connected reports
	// true from then on. It must not block.
	OnReconnect func(attempt int, err error)
	// Logger receives what the connection cannot report otherwise.
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.ClientName == "" {
		o.ClientName = DefaultClientName
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.ReconnectAttempts == 0 {
		o.ReconnectAttempts = DefaultReconnectAttempts
	}
	if o.ReconnectBackoff <= 0 {
		o.ReconnectBackoff = DefaultReconnectBackoff
	}
	if o.ReconnectMaxBackoff <= 0 {
		o.ReconnectMaxBackoff = DefaultReconnectMaxBackoff
	}
	if o.ReconnectTimeout <= 0 {
		o.ReconnectTimeout = DefaultReconnectTimeout
	}
	if o.MaxBufferedOutput <= 0 {
		o.MaxBufferedOutput = DefaultMaxBufferedOutput
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// DialFunc opens a new transport to the server. It is called once by
// Connect and again for every resume attempt.
type DialFunc func(ctx context.Context) (jsonrpc.Stream, error)

// Client is a connection to an exec-server session that survives dropped
// transports. Its methods are safe for concurrent use.
type Client struct {
	opts    Options
	dial    DialFunc
	onClose func() // releases what the dialer started (in-process server)
	// inProcess: the server runs in this process (NewInProcess), on this
	// machine, so a command may be wrapped with this program's own paths.
	inProcess bool

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	sessionID string
	env       execproto.EnvironmentInfo
	idPrefix  string

	mu         sync.Mutex
	conn       *jsonrpc.Conn // nil while resuming
	changed    chan struct{} // closed and replaced whenever conn changes
	procs      map[string]*Process
	nextProc   uint64
	reconnects int
	closed     bool  // Close was called: no new goroutines
	err        error // why the client ended, once it has
	wg         sync.WaitGroup

	done chan struct{}
}

// Dial connects to the exec-server at url: ws://HOST:PORT[/PATH],
// wss://... or unix:///PATH (also unix://PATH).
func Dial(ctx context.Context, url string, opts Options) (*Client, error) {
	dial, err := URLDialer(url, opts)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, dial, opts)
}

// URLDialer returns the DialFunc of a server URL, as Dial uses it.
func URLDialer(url string, opts Options) (DialFunc, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return nil, fmt.Errorf("execclient: server URL %q: want ws://HOST:PORT or unix://PATH", url)
	}
	switch scheme {
	case "ws", "wss":
		if rest == "" {
			return nil, fmt.Errorf("execclient: server URL %q: missing host", url)
		}
		header := opts.Header.Clone()
		if header == nil {
			header = http.Header{}
		}
		if opts.BearerToken != "" {
			if err := checkTokenTransport(url); err != nil {
				return nil, err
			}
			header.Set("Authorization", "Bearer "+opts.BearerToken)
		}
		return func(ctx context.Context) (jsonrpc.Stream, error) {
			return jsonrpc.DialWebSocket(ctx, url, header, opts.MaxMessage)
		}, nil
	case "unix":
		if rest == "" {
			return nil, fmt.Errorf("execclient: server URL %q: missing socket path", url)
		}
		return func(ctx context.Context) (jsonrpc.Stream, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "unix", rest)
			if err != nil {
				return nil, err
			}
			return jsonrpc.NewLineStream(nc, opts.MaxMessage), nil
		}, nil
	}
	return nil, fmt.Errorf("execclient: server URL %q: unknown scheme %q (want ws, wss or unix)", url, scheme)
}

// Connect performs the handshake over a transport from dial and returns the
// client. dial is called again to resume after a dropped connection.
func Connect(ctx context.Context, dial DialFunc, opts Options) (*Client, error) {
	return connect(ctx, dial, opts, nil)
}

func connect(ctx context.Context, dial DialFunc, opts Options, onClose func()) (*Client, error) {
	opts.setDefaults()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	c := &Client{
		opts:     opts,
		dial:     dial,
		onClose:  onClose,
		idPrefix: "ec-" + hex.EncodeToString(rnd[:]) + "-",
		changed:  make(chan struct{}),
		procs:    make(map[string]*Process),
		done:     make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	hctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	conn, res, err := c.handshake(hctx, nil)
	if err != nil {
		c.cancel()
		return nil, err
	}
	c.sessionID = res.SessionID
	c.env = res.EnvironmentInfo
	c.conn = conn
	c.goroutine(func() { c.supervise(conn) })
	return c, nil
}

// handshake dials and initializes one connection.
func (c *Client) handshake(ctx context.Context, resume *string) (*jsonrpc.Conn, execproto.InitializeResponse, error) {
	stream, err := c.dial(ctx)
	if err != nil {
		return nil, execproto.InitializeResponse{}, fmt.Errorf("execclient: dial: %w", err)
	}
	conn := jsonrpc.NewConn(stream, jsonrpc.Options{Handler: c.mux(), Logger: c.opts.Logger})
	// A context that also ends with the client, so Close never waits on a
	// handshake.
	ctx, stop := mergeCancel(ctx, c.ctx)
	defer stop()
	res, err := execproto.Initialize.Call(ctx, conn, execproto.InitializeParams{
		ClientName: c.opts.ClientName, ResumeSessionID: resume,
	})
	if err == nil {
		err = execproto.Initialized.Notify(ctx, conn, execproto.Unit{})
	}
	if err == nil && resume != nil && res.SessionID != *resume {
		err = fmt.Errorf("server resumed session %q instead of %q", res.SessionID, *resume)
	}
	if err != nil {
		_ = conn.Close()
		return nil, res, fmt.Errorf("execclient: initialize: %w", err)
	}
	return conn, res, nil
}

func mergeCancel(ctx, other context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(other, cancel)
	return ctx, func() { stop(); cancel() }
}

// goroutine runs fn on a goroutine that Close waits for; it reports false,
// running nothing, once Close has started.
func (c *Client) goroutine(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// SessionID returns the server's id of the session, stable across resumes.
func (c *Client) SessionID() string { return c.sessionID }

// EnvironmentInfo returns what the server reported in initialize.
func (c *Client) EnvironmentInfo() execproto.EnvironmentInfo { return c.env }

// Reconnects reports how many times the session was resumed.
func (c *Client) Reconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reconnects
}

// Connected reports whether the client has a live connection now: false
// while it resumes and once it has ended.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn != nil && c.err == nil
}

// Done is closed when the client has ended: closed, or the session lost.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err reports why the client ended (ErrClientClosed or an ErrSessionLost
// error), or nil while it is alive.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection and waits for the client's goroutines. It does
// not terminate processes: the server keeps the session detached for its
// TTL, then kills them. Readers and Wait of unfinished processes fail with
// ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closed = true
	conn := c.conn
	c.mu.Unlock()
	// The connection first, so that calls in flight end with it rather than
	// leave late responses behind; then whatever waits (a resume, backoff).
	if conn != nil {
		_ = conn.Close()
	}
	c.cancel()
	c.wg.Wait()
	c.fail(ErrClientClosed)
	if c.onClose != nil {
		c.onClose()
	}
	return nil
}

// fail ends the client with err: every unfinished process fails with it.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	procs := make([]*Process, 0, len(c.procs))
	for _, p := range c.procs {
		procs = append(procs, p)
	}
	c.procs = map[string]*Process{}
	c.conn = nil
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	for _, p := range procs {
		p.fail(err)
	}
	close(c.done)
}

// supervise resumes the session whenever the current connection ends.
func (c *Client) supervise(conn *jsonrpc.Conn) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-conn.Done():
		}
		if c.ctx.Err() != nil {
			return
		}
		cause := conn.Err()
		if _, ok := c.setConn(nil, false); !ok {
			return
		}
		if c.opts.OnDisconnect != nil {
			c.opts.OnDisconnect(cause)
		}
		next, attempt, err := c.resume(cause)
		if err != nil {
			if c.ctx.Err() == nil {
				c.fail(err)
			}
			return
		}
		procs, ok := c.setConn(next, true)
		if !ok {
			_ = next.Close()
			return
		}
		if c.opts.OnReconnect != nil {
			c.opts.OnReconnect(attempt, nil)
		}
		for _, p := range procs {
			p.catchUp()
		}
		conn = next
	}
}

// setConn installs conn (nil while resuming) and returns the live
// processes; false means the client has ended and conn was not installed.
func (c *Client) setConn(conn *jsonrpc.Conn, resumed bool) ([]*Process, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.err != nil {
		return nil, false
	}
	c.conn = conn
	if resumed {
		c.reconnects++
	}
	close(c.changed)
	c.changed = make(chan struct{})
	procs := make([]*Process, 0, len(c.procs))
	for _, p := range c.procs {
		procs = append(procs, p)
	}
	return procs, true
}

// resume redials and reattaches the session, with bounded attempts.
func (c *Client) resume(cause error) (*jsonrpc.Conn, int, error) {
	if c.opts.ReconnectAttempts < 0 {
		return nil, 0, fmt.Errorf("%w: %v (resuming is disabled)", ErrSessionLost, cause)
	}
	deadline := time.Now().Add(c.opts.ReconnectTimeout)
	backoff := c.opts.ReconnectBackoff
	sid := c.sessionID
	lastErr := cause
	for attempt := 1; attempt <= c.opts.ReconnectAttempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(min(backoff, time.Until(deadline)))
			select {
			case <-c.ctx.Done():
				t.Stop()
				return nil, 0, ErrClientClosed
			case <-t.C:
			}
			backoff = min(2*backoff, c.opts.ReconnectMaxBackoff)
		}
		if time.Now().After(deadline) {
			break
		}
		ctx, cancel := context.WithDeadline(c.ctx, deadline)
		ctx, cancel2 := context.WithTimeout(ctx, c.opts.DialTimeout)
		conn, _, err := c.handshake(ctx, &sid)
		cancel2()
		cancel()
		if err == nil {
			// Announced by the caller once conn is installed, so that
			// whoever hears of the resume finds the client connected.
			return conn, attempt, nil
		}
		if c.opts.OnReconnect != nil {
			c.opts.OnReconnect(attempt, err)
		}
		if c.ctx.Err() != nil {
			return nil, 0, ErrClientClosed
		}
		lastErr = err
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code != jsonrpc.CodeSessionTaken && rpcErr.Code != jsonrpc.CodeOverloaded {
			// The server answered and refused: the session is gone.
			return nil, 0, fmt.Errorf("%w: the exec-server refused to resume session %s (it restarted, or the session outlived its TTL): %v", ErrSessionLost, sid, err)
		}
	}
	return nil, 0, fmt.Errorf("%w: %v", ErrSessionLost, lastErr)
}

// liveConn returns the current connection other than dead, waiting while
// the client resumes.
func (c *Client) liveConn(ctx context.Context, dead *jsonrpc.Conn) (*jsonrpc.Conn, error) {
	for {
		c.mu.Lock()
		conn, changed, err := c.conn, c.changed, c.err
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if conn != nil && conn != dead {
			return conn, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// call runs fn on a live connection. With retry, a call that failed because
// the connection dropped is made again on the resumed one; only idempotent
// calls may retry.
func (c *Client) call(ctx context.Context, retry bool, fn func(conn *jsonrpc.Conn) error) error {
	var dead *jsonrpc.Conn
	for {
		conn, err := c.liveConn(ctx, dead)
		if err != nil {
			return err
		}
		err = fn(conn)
		if err == nil || !errors.Is(err, jsonrpc.ErrClosed) || ctx.Err() != nil {
			return err
		}
		if !retry {
			// The request may or may not have reached the server.
			return err
		}
		dead = conn
	}
}

// Call makes one call of m on the client's current connection, waiting for
// a resume in progress. It is not retried if the connection drops while
// the call is in flight (the outcome is then unknown and the error wraps
// jsonrpc.ErrClosed). Use it for methods without a wrapper, such as fs/*.
func Call[P, R any](ctx context.Context, c *Client, m jsonrpc.Method[P, R], params P) (R, error) {
	var r R
	err := c.call(ctx, false, func(conn *jsonrpc.Conn) error {
		var err error
		r, err = m.Call(ctx, conn, params)
		return err
	})
	return r, err
}

// ReadProcess calls process/read; it is retried across a resume, as reading
// has no side effect.
func (c *Client) ReadProcess(ctx context.Context, p execproto.ProcessReadParams) (execproto.ProcessReadResponse, error) {
	var r execproto.ProcessReadResponse
	err := c.call(ctx, true, func(conn *jsonrpc.Conn) error {
		var err error
		r, err = execproto.ProcessRead.Call(ctx, conn, p)
		return err
	})
	return r, err
}

// mux routes the server's notifications to the processes. Handlers never
// return an error, which would close the connection, and never block.
func (c *Client) mux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	execproto.ProcessOutput.Register(mux, func(_ context.Context, n execproto.ProcessOutputNotification) error {
		if p := c.process(n.ProcessID); p != nil {
			p.onOutput(n)
		}
		return nil
	})
	execproto.ProcessExited.Register(mux, func(_ context.Context, n execproto.ProcessExitedNotification) error {
		if p := c.process(n.ProcessID); p != nil {
			p.onExited(n)
		}
		return nil
	})
	execproto.ProcessClosed.Register(mux, func(_ context.Context, n execproto.ProcessClosedNotification) error {
		if p := c.process(n.ProcessID); p != nil {
			p.onClosed(n)
		}
		return nil
	})
	return mux
}

func (c *Client) process(id string) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.procs[id]
}

func (c *Client) forget(p *Process) {
	c.mu.Lock()
	if c.procs[p.id] == p {
		delete(c.procs, p.id)
	}
	c.mu.Unlock()
}
