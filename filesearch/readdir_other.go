//go:build !linux

package filesearch

import (
	"os"
	"syscall"
)

// listDir reads directory abs: its identity and its entries.
func listDir(abs string) (id devIno, idOK bool, ents []rawEnt, err error) {
	f, err := os.Open(abs)
	if err != nil {
		return id, false, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			id, idOK = devIno{uint64(sys.Dev), uint64(sys.Ino)}, true //nolint:unconvert // widths differ by platform
		}
	}
	ents, err = readEntriesPortable(f)
	return id, idOK, ents, err
}
