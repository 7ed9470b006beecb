//go:build unix

package jsonrpc

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// socketPair returns two connected Unix sockets. Unlike net.Pipe they buffer,
// so a test that writes before it reads does not deadlock.
func socketPair(t testing.TB) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conv := func(fd int) net.Conn {
		syscall.CloseOnExec(fd)
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return conv(fds[0]), conv(fds[1])
}
