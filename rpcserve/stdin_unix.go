//go:build unix

package rpcserve

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// closeableStdin makes a stdin pipe or socket closeable while a read is
// blocked on it, so that shutting the server down (SIGTERM) ends the stdio
// connection and its processes even when the client keeps its end open. A
// terminal is left alone: putting it in non-blocking mode would change it
// for the shell that shares it.
func closeableStdin(r io.Reader) (io.Reader, io.Closer) {
	f, ok := r.(*os.File)
	if !ok {
		if c, ok := r.(io.Closer); ok {
			return r, c
		}
		return r, nil
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, ioctlGetTermios); err == nil {
		return r, nil
	}
	// A duplicate, not a second *os.File on the same descriptor: f's
	// finalizer (or its owner's Close) would close the descriptor under
	// the new file, and the client would see its pipe closed mid-session.
	dup, err := unix.Dup(fd)
	if err != nil {
		return r, nil
	}
	unix.CloseOnExec(dup)
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return r, nil
	}
	// A non-blocking descriptor is registered with the poller, whose Close
	// wakes a pending Read.
	nf := os.NewFile(uintptr(dup), f.Name())
	return nf, nf
}
