//go:build linux

package peerguard

import (
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const dialEnv = "PEERGUARD_TEST_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		// A client child: connect, then hold the connection until the
		// server closes it.
		network := "tcp"
		if addr[0] == '/' {
			network = "unix"
		}
		c, err := net.Dial(network, addr)
		if err == nil {
			_, _ = io.Copy(io.Discard, c)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDescendantsBothWays: the children lists and the parent scan find
// the same descendants.
func TestDescendantsBothWays(t *testing.T) {
	// Both sleeps are forked before the echo.
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & echo ready; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line := make([]byte, 6)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("sh: %q %v", line, err)
	}
	a, _, err1 := descendantsByChildren(os.Getpid())
	b, _, err2 := descendantsByParent()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// (Earlier tests' adopted orphans may be there too.)
	if len(a) < 3 || len(a) != len(b) || !a[cmd.Process.Pid] {
		t.Fatalf("descendants: by children %v, by parent %v (want sh %d and two sleeps)", a, b, cmd.Process.Pid)
	}
	for pid := range a {
		if !b[pid] {
			t.Fatalf("%d found by children, not by parent", pid)
		}
	}
}

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"0000000000000000FFFF00000100007F:A0B1": "[::ffff:127.0.0.1]:41137",
	} {
		got, err := parseProcAddr(in)
		if err != nil || got != netip.MustParseAddrPort(want) {
			t.Errorf("parseProcAddr(%s) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "zz:1", "0100007F", "0100007F:xyz", "01:0016"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("parseProcAddr(%q) accepted", bad)
		}
	}
}

// accept waits for one connection on ln.
func accept(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(got)
			return
		}
		got <- c
	}()
	select {
	case c, ok := <-got:
		if !ok {
			t.Fatal("accept failed")
		}
		return c
	case <-time.After(15 * time.Second):
		t.Fatal("no connection within 15s")
	}
	return nil
}

// TestDescendantsAreFoundAfterSetsid: a process that left with setsid and
// a parent that exited is still recognised (this test, like the servers,
// is a child subreaper); a client of this process itself is not a
// descendant.
func TestDescendantsAreFoundAfterSetsid(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, network := range []string{"tcp", "unix"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = t.TempDir() + "/s.sock"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		// This process's own connection.
		own, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc := accept(t, ln)
		if d, err := IsDescendant(sc); d || err != nil {
			t.Errorf("%s: this process's own client is a descendant: %v %v", network, d, err)
		}
		sc.Close()
		own.Close()
		// A grandchild that left with setsid: its parent exits at once.
		cmd := exec.Command("sh", "-c", `setsid "$0" -test.run=^$ </dev/null & exit 0`, self)
		cmd.Env = append(os.Environ(), dialEnv+"="+ln.Addr().String())
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		sc = accept(t, ln)
		if d, err := IsDescendant(sc); !d || err != nil {
			t.Errorf("%s: a setsid grandchild is not found: %v %v", network, d, err)
		}
		sc.Close() // the grandchild exits
		ln.Close()
	}
}

// TestOwnClientHeldByChild: a connection this process made is its own
// even while a child holds a copy of the socket, as every command forked
// by the exec-server does between its fork and its exec. Before, such a
// connection made at the moment a command started was refused (the 403
// of TestEnvironmentsTwoThreadsTwoServers under load).
func TestOwnClientHeldByChild(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	own, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	sc := accept(t, ln)
	defer sc.Close()
	f, err := own.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	// The child keeps the copy across its exec, so it holds the socket
	// for as long as it lives, not only for the window a fork leaves.
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	f.Close()
	if d, err := IsDescendant(sc); d || err != nil {
		t.Fatalf("this process's own client, a copy held by a child: descendant %v %v", d, err)
	}
}

// BenchmarkIsDescendantTCP is the cost a loopback WebSocket connection
// pays for the check: the /proc scan of every process's parent, the
// socket table, and the descendants' descriptors.
func BenchmarkIsDescendantTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	sc, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer sc.Close()
	for b.Loop() {
		if d, err := IsDescendant(sc); d || err != nil {
			b.Fatal(d, err)
		}
	}
}
