package execserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/codexd/codexd/jsonrpc"
)

// ReadAuthToken reads a bearer token from a file, as --auth-token-file
// names it; surrounding whitespace is ignored and an empty token refused.
func ReadAuthToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("auth token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("auth token file %s is empty", path)
	}
	return tok, nil
}

// Run serves cfg on listen until ctx ends (or, for stdio, until the client
// hangs up). The bound URL is printed on stdout as one line, for scripts; for
// stdio, nothing is printed there, as stdout carries the protocol.
func Run(ctx context.Context, cfg Config, listen jsonrpc.Listen, stdin io.Reader, stdout io.Writer) error {
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if listen.Scheme == "off" {
		<-ctx.Done()
		return nil
	}
	l, err := srv.Listen(listen)
	if err != nil {
		return err
	}
	if listen.Scheme != "stdio" {
		fmt.Fprintln(stdout, l.URL)
	}
	errc := make(chan error, 1)
	go func() { errc <- l.Serve(stdin, stdout) }()
	select {
	case <-ctx.Done():
		_ = l.Close()
		srv.Close()
		<-errc
		return nil
	case err := <-errc:
		_ = l.Close()
		return err
	}
}
