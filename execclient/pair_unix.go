//go:build unix

package execclient

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// connPair returns the two ends of a Unix socket pair: buffered in the
// kernel like the sockets of a real server.
func connPair() (net.Conn, net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	ours, err := fileConn(fds[0], "execclient")
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	theirs, err := fileConn(fds[1], "execserver")
	if err != nil {
		ours.Close()
		return nil, nil, err
	}
	return ours, theirs, nil
}

func fileConn(fd int, name string) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), name)
	nc, err := net.FileConn(f) // dups fd
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	return nc, nil
}
