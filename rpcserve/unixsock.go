package rpcserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// listenUnix binds a Unix socket at path with mode 0600, so that only its
// owner can connect: whoever connects runs commands as the server's user.
//
// The mode is set on the socket before bind (see restrictSocket), so the
// file is never created with looser permissions, whatever the umask; it is
// set on the file again after bind for systems where the first step does
// not apply. A stale socket from a dead server is replaced; a live one, or
// any other kind of file, is left alone and refused.
func listenUnix(path string) (net.Listener, os.FileInfo, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, nil, errors.New("a server is already listening there")
		}
		_ = os.Remove(path)
	}
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = restrictSocket(fd) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, nil, err
	}
	// We remove the file ourselves, only while it is still ours.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		_ = os.Remove(path)
		return nil, nil, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return ln, fi, nil
}
