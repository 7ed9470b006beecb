//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package rpcserve

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
