package environment

import (
	"context"
	"io"
	"testing"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/internal/execproctest"
	"github.com/codexd/codexd/jsonrpc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	execproctest.ServeIfAsked() // the child of an execproctest.Proc
	goleak.VerifyTestMain(m)
}

func run(t *testing.T, d *execclient.Connector) string {
	t.Helper()
	c, err := d.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.Start(context.Background(), execclient.StartOptions{Argv: []string{"/bin/echo", "through"}})
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, p.Stderr())
	out, _ := io.ReadAll(p.Stdout())
	if _, err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestInProcess(t *testing.T) {
	d, err := LocalFromFlag("", execserver.Config{}, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Remote() {
		t.Fatal("in-process dialer says remote")
	}
	if got := run(t, d); got != "through\n" {
		t.Fatalf("got %q", got)
	}
}

func TestRemoteFromEnv(t *testing.T) {
	srv, err := execserver.New(execserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "ws", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(nil, nil) }()
	defer func() { l.Close(); <-done }()
	t.Setenv(EnvURL, l.URL())
	d, err := LocalFromFlag("", execserver.Config{}, execclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.Remote() || d.URL() != l.URL() {
		t.Fatalf("dialer %+v", d)
	}
	if got := run(t, d); got != "through\n" {
		t.Fatalf("got %q", got)
	}
}
