//go:build !linux

package filesearch

import "os"

func readEntries(f *os.File) ([]rawEnt, error) { return readEntriesPortable(f) }
