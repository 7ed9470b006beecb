package jsonrpc

import (
	"net"
	"os"
	"syscall"
	"testing"
)

func socketPairB(b *testing.B) (net.Conn, net.Conn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		b.Fatal(err)
	}
	conv := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	return conv(fds[0]), conv(fds[1])
}
