// Package execproctest runs exec-servers in processes of their own for
// tests: the test binary re-executes itself as the server (its TestMain
// calls ServeIfAsked first), so that a test can SIGKILL one and start it
// again on the same address, as a restarted exec-server comes back.
//
// It is for tests only: it must never be imported by non-test code.
package execproctest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/execserver"
	"github.com/codexd/codexd/jsonrpc"
)

// execServerEnv asks the test binary to serve an exec-server instead of
// running tests: "ADDR ROOT".
const execServerEnv = "CODEXD_EXECPROCTEST_SERVE"

// ServeIfAsked serves an exec-server on a loopback WebSocket in
// this process, confined to its root, and prints its URL, when the test
// binary runs as a Proc's child; it never returns then.
func ServeIfAsked() {
	spec := os.Getenv(execServerEnv)
	if spec == "" {
		return
	}
	addr, root, _ := strings.Cut(spec, " ")
	srv, err := execserver.New(execserver.Config{Roots: []string{root}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := srv.Listen(jsonrpc.Listen{Scheme: "ws", Addr: addr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(l.URL())
	_ = l.Serve(nil, nil)
	os.Exit(0)
}

// Proc is an exec-server in a process of its own, which a test can
// kill (SIGKILL: its sessions die with it) and start again on the same
// address, as a restarted exec-server comes back.
type Proc struct {
	t *testing.T
	// Root is the directory the server is confined to; URL its address.
	Root, URL string
	// Bin is the program the process runs (the test binary, or a copy).
	Bin  string
	addr string
	cmd  *exec.Cmd
}

// Start starts an exec-server process on a free loopback port, confined
// to a new directory under t.TempDir(); it is killed at the test's end.
func Start(t *testing.T) *Proc {
	t.Helper()
	return StartBinary(t, os.Args[0])
}

// StartCopy is Start with the test binary copied to another path first:
// an exec-server whose executable is not where the test's own is, as on
// another machine.
func StartCopy(t *testing.T) *Proc {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "elsewhere", "execserver.test")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return StartBinary(t, bin)
}

// StartBinary is Start running bin, a copy of the test binary.
func StartBinary(t *testing.T, bin string) *Proc {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A free port, taken by the child.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &Proc{t: t, addr: addr, Root: root, Bin: bin}
	p.Start()
	t.Cleanup(p.Kill)
	return p
}

// Start starts the process again (after Kill), on the same address.
func (p *Proc) Start() {
	p.t.Helper()
	cmd := exec.Command(p.Bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), execServerEnv+"="+p.addr+" "+p.Root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case url := <-line:
		if url == "" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			p.t.Fatal("the exec-server process printed no URL")
		}
		p.URL = url
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		p.t.Fatal("the exec-server process did not start")
	}
	p.cmd = cmd
}

// Kill ends the process with SIGKILL and reaps it.
func (p *Proc) Kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
}
