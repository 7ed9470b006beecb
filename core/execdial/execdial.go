// Package execdial makes the exec-server connections the agent core runs
// commands through: an exec-server inside this process (the default), or a
// remote one from a URL (`--exec-server ws://…`, CODEX_EXEC_SERVER_URL), so
// that a turn can run on another machine with no other change.
//
// It only connects; it must never hold agent logic.
package execdial

import (
	"context"
	"os"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// EnvURL names the environment variable of a remote exec-server, as in
// Codex.
const EnvURL = "CODEX_EXEC_SERVER_URL"

// Dialer connects to an exec-server. Close releases what it started.
type Dialer struct {
	// Dial is core.Config.ExecDialer.
	Dial func(ctx context.Context) (*execclient.Client, error)
	// Remote is true for a dialled URL: sandboxed commands then need the
	// codexd binary on that machine (core.LandlockSandbox{Remote: true,
	// Self: path}).
	Remote bool
	URL    string
	close  func() error
}

// Close stops the in-process exec-server, if any.
func (d *Dialer) Close() error {
	if d.close != nil {
		return d.close()
	}
	return nil
}

// InProcess starts an exec-server in this process.
func InProcess(cfg execserver.Config, opts execclient.Options) (*Dialer, error) {
	srv, err := execserver.New(cfg)
	if err != nil {
		return nil, err
	}
	if opts.ClientName == "" {
		opts.ClientName = "codexd-core"
	}
	return &Dialer{
		Dial: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.NewInProcess(ctx, srv, opts)
		},
		close: srv.Close,
	}, nil
}

// Remote connects to the exec-server at url (ws://, wss:// or unix://).
func Remote(url string, opts execclient.Options) *Dialer {
	if opts.ClientName == "" {
		opts.ClientName = "codexd-core"
	}
	return &Dialer{
		Dial: func(ctx context.Context) (*execclient.Client, error) {
			return execclient.Dial(ctx, url, opts)
		},
		Remote: true, URL: url,
	}
}

// FromFlag picks the exec-server: url if given, else $CODEX_EXEC_SERVER_URL,
// else one in this process.
func FromFlag(url string, cfg execserver.Config, opts execclient.Options) (*Dialer, error) {
	if url == "" {
		url = os.Getenv(EnvURL)
	}
	if url != "" {
		return Remote(url, opts), nil
	}
	return InProcess(cfg, opts)
}
