package fsops

import "golang.org/x/sys/unix"

const oPath = unix.O_PATH
