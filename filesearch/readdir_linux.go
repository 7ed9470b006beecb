package filesearch

import (
	"sync"
	"syscall"
	"unsafe"
)

// direntBufs are getdents buffers, reused across directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// listDir reads directory abs with plain system calls: open, fstat,
// getdents(2) and close, where os.Open and os.File.ReadDir add a poller
// registration per directory and two allocations per entry; a walk lists
// every directory of the tree. The names of one directory share one
// allocation.
func listDir(abs string) (id devIno, idOK bool, ents []rawEnt, err error) {
	var fd int
	for {
		fd, err = syscall.Open(abs, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return id, false, nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil {
		id, idOK = devIno{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // widths differ by platform
	}
	ents, err = getdents(fd)
	return id, idOK, ents, err
}

// getdents lists the open directory fd.
func getdents(fd int) ([]rawEnt, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var names []byte
	type pending struct {
		start, end int
		kind       uint8
	}
	var ps []pending
	var rerr error
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			rerr = err
			break
		}
		if n <= 0 {
			break
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the name, NUL-terminated.
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen == 0 || off+reclen > n {
				break
			}
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			off += reclen
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			kind := kindOther
			switch typ {
			case syscall.DT_DIR:
				kind = kindDir
			case syscall.DT_LNK:
				kind = kindLink
			case syscall.DT_UNKNOWN:
				kind = kindUnknown
			}
			ps = append(ps, pending{len(names), len(names) + len(name), kind})
			names = append(names, name...)
		}
	}
	all := string(names)
	out := make([]rawEnt, len(ps))
	for i, p := range ps {
		out[i] = rawEnt{name: all[p.start:p.end], kind: p.kind}
	}
	return out, rerr
}
