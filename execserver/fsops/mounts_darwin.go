package fsops

import (
	"golang.org/x/sys/unix"
)

// mountPoints lists the mounted filesystems (getfsstat), or those of a
// mountinfo file when one is given (tests).
func mountPoints(mountinfo string) ([]string, error) {
	if mountinfo != "" {
		return readMountPoints(mountinfo)
	}
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil {
		return nil, err
	}
	buf := make([]unix.Statfs_t, n+8)
	n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT)
	if err != nil {
		return nil, err
	}
	points := make([]string, 0, n)
	for _, st := range buf[:n] {
		points = append(points, unix.ByteSliceToString(st.Mntonname[:]))
	}
	return points, nil
}
