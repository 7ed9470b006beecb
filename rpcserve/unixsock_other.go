//go:build !linux

package rpcserve

// restrictSocket does nothing where the mode of a socket before bind does
// not carry over to its file; listenUnix sets the file's mode right after
// bind instead.
func restrictSocket(fd uintptr) error { return nil }
