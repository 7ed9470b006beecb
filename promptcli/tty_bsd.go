//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package promptcli

import "golang.org/x/sys/unix"

const ioctlGetTermios = unix.TIOCGETA
