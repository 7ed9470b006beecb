package rpcserve

import "golang.org/x/sys/unix"

// restrictSocket gives the socket's inode mode 0600 before bind: Linux
// creates the socket file with that mode (less the umask), so there is no
// moment at which another user could connect.
func restrictSocket(fd uintptr) error {
	return unix.Fchmod(int(fd), 0o600)
}
