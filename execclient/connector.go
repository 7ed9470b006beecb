package execclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
)

// Connector makes the clients of one exec-server, in this process or at a
// URL, so that whoever runs commands (the agent core) holds one thing per
// machine and never needs to know which kind it is, nor build the server.
type Connector struct {
	url     string
	connect func(ctx context.Context) (*Client, error)
	close   func() error
}

// InProcessConnector connects to srv over in-process socket pairs (see
// NewInProcess). Close closes srv when it is an io.Closer, such as
// *execserver.Server: the connector owns it.
func InProcessConnector(srv StreamServer, opts Options) *Connector {
	c := &Connector{connect: func(ctx context.Context) (*Client, error) { return NewInProcess(ctx, srv, opts) }}
	if cl, ok := srv.(io.Closer); ok {
		c.close = cl.Close
	}
	return c
}

// URLConnector connects to the exec-server at url (ws://, wss:// or
// unix://). A bad URL, or a bearer token that would cross the network in
// clear, is refused here rather than at the first connection.
func URLConnector(url string, opts Options) (*Connector, error) {
	if _, err := URLDialer(url, opts); err != nil {
		return nil, err
	}
	return &Connector{url: url, connect: func(ctx context.Context) (*Client, error) { return Dial(ctx, url, opts) }}, nil
}

// Connect makes a new client (a new session).
func (c *Connector) Connect(ctx context.Context) (*Client, error) { return c.connect(ctx) }

// Remote reports whether the server is reached by URL, so possibly on
// another machine.
func (c *Connector) Remote() bool { return c.url != "" }

// URL is the server's URL, "" in process.
func (c *Connector) URL() string { return c.url }

// Close releases what the connector owns (the in-process server). The
// clients it made are their callers' to close.
func (c *Connector) Close() error {
	if c.close != nil {
		return c.close()
	}
	return nil
}

// checkTokenTransport refuses a bearer token sent in clear to another
// machine: it goes only over wss://, a Unix socket, or to a loopback
// address (as Codex's environment/add requires).
func checkTokenTransport(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("execclient: server URL %q: %v", rawURL, err)
	}
	switch u.Scheme {
	case "wss", "unix":
		return nil
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("execclient: server URL %q: %w", rawURL, ErrInsecureToken)
}

// ErrInsecureToken: a bearer token would cross the network in clear (not
// wss://, not a Unix socket, not to loopback). Callers that must refuse
// such a configuration, but only warn of other URL faults, test for it.
var ErrInsecureToken = errors.New("a bearer token needs a secure transport (wss://) or a loopback destination")
