//go:build !linux

package fsops

import "io/fs"

// statPlace returns the metadata of pl (of the symlink itself unless
// follow). Creation times come from statx, which only Linux has: elsewhere
// they are reported as 0, as Codex does where the filesystem has none.
func statPlace(pl place, follow bool) (fs.FileInfo, int64, error) {
	if follow {
		fi, err := pl.stat()
		return fi, 0, err
	}
	fi, err := pl.lstat()
	return fi, 0, err
}
