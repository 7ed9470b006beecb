package fsops

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statPlace returns the metadata of pl (of the symlink itself unless
// follow) and its creation time in ms where the filesystem records one
// (else 0, as Codex reports). The file is opened with O_PATH through its
// root, so that what is described is what the roots allow, and opening has
// no effect on a device or FIFO.
func statPlace(pl place, follow bool) (fs.FileInfo, int64, error) {
	flags := unix.O_PATH
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	f, err := pl.openFile(flags, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	return fi, birthTimeMs(f), nil
}

func birthTimeMs(f *os.File) int64 {
	var stx unix.Statx_t
	if err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &stx); err != nil {
		return 0
	}
	if stx.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return time.Unix(stx.Btime.Sec, int64(stx.Btime.Nsec)).UnixMilli()
}
