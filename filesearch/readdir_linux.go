package filesearch

import (
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// direntBufs are getdents buffers, reused across directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readEntries lists directory f with getdents(2): the names of one
// directory share one allocation, where os.File.ReadDir makes two per
// entry, and a walk lists every file of the tree.
func readEntries(f *os.File) ([]rawEnt, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return readEntriesPortable(f)
	}
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
	cerr := rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Getdents(int(fd), buf)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				rerr = err
				return true
			}
			if n <= 0 {
				return true
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
	})
	if cerr != nil {
		return readEntriesPortable(f)
	}
	all := string(names)
	out := make([]rawEnt, len(ps))
	for i, p := range ps {
		out[i] = rawEnt{name: all[p.start:p.end], kind: p.kind}
	}
	return out, rerr
}
