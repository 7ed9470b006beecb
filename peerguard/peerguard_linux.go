package peerguard

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// IsDescendant reports whether the peer of c, a loopback TCP or a Unix
// socket connection of this process, is a descendant of this process. Any
// other connection is not.
func IsDescendant(c net.Conn) (bool, error) {
	switch c := c.(type) {
	case *net.UnixConn:
		pid, err := unixPeerPID(c)
		if err != nil {
			return false, err
		}
		desc, _, err := descendants()
		if err != nil {
			return false, err
		}
		return desc[pid], nil
	case *net.TCPConn:
		local, lok := c.LocalAddr().(*net.TCPAddr)
		remote, rok := c.RemoteAddr().(*net.TCPAddr)
		if !lok || !rok || !remote.IP.IsLoopback() {
			return false, nil
		}
		return tcpPeerIsDescendant(local.AddrPort(), remote.AddrPort())
	}
	return false, nil
}

func unixPeerPID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return int(cred.Pid), nil
}

// tcpPeerIsDescendant finds the client socket of the connection from
// client to server and whether a descendant holds it.
func tcpPeerIsDescendant(server, client netip.AddrPort) (bool, error) {
	desc, order, err := descendants()
	if err != nil || len(desc) == 0 {
		return false, err
	}
	inode, err := socketInode(client, server)
	if err != nil {
		return false, err
	}
	if inode == "" {
		return false, nil // gone already: nobody can talk through it
	}
	target := "socket:[" + inode + "]"
	// A connection this process made is its own, even though a child
	// forked meanwhile holds a copy of every descriptor until its exec
	// closes them: a command started at the moment this process connects
	// must not make the connection a descendant's.
	if held, _ := holds("/proc/self/fd", target); held {
		return false, nil
	}
	unreadable := false
	for _, pid := range order {
		held, err := holds("/proc/"+strconv.Itoa(pid)+"/fd", target)
		if held {
			return true, nil
		}
		if errors.Is(err, os.ErrPermission) {
			unreadable = true
		}
		// Any other error: exited meanwhile.
	}
	return unreadable, nil
}

// holds reports whether one of the descriptors in dir (a /proc/PID/fd)
// is target.
func holds(dir, target string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && l == target {
			return true, nil
		}
	}
	return false, nil
}

// socketInode is the inode of the TCP socket whose local end is local and
// remote end remote, from /proc/net/tcp and tcp6; "" if there is none.
func socketInode(local, remote netip.AddrPort) (string, error) {
	for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return "", err
		}
		inode, err := findSocket(f, local, remote)
		f.Close()
		if err != nil || inode != "" {
			return inode, err
		}
	}
	return "", nil
}

func findSocket(f *os.File, local, remote netip.AddrPort) (string, error) {
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		l, err1 := parseProcAddr(fields[1])
		r, err2 := parseProcAddr(fields[2])
		if err1 != nil || err2 != nil {
			continue
		}
		if sameAddr(l, local) && sameAddr(r, remote) {
			return fields[9], nil
		}
	}
	return "", sc.Err()
}

func sameAddr(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// parseProcAddr reads /proc/net/tcp's "0100007F:1F90": the address as
// 32-bit words in host (little-endian) order, then the port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", s)
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr, uint16(port)), nil
}

// descendants returns the pids whose ppid chain leads to this process,
// as a set and in the order found: from the kernel's lists of children
// (/proc/PID/task/TID/children), walked down from this process, or where
// the kernel has none, from the parent of every process.
func descendants() (map[int]bool, []int, error) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children"); err == nil {
		return descendantsByChildren(os.Getpid())
	}
	return descendantsByParent()
}

// descendantsByChildren walks the children lists down from root.
func descendantsByChildren(root int) (map[int]bool, []int, error) {
	desc := map[int]bool{}
	var order []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			continue // exited meanwhile
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if child, err := strconv.Atoi(f); err == nil && !desc[child] && child != root {
					desc[child] = true
					order = append(order, child)
					queue = append(queue, child)
				}
			}
		}
	}
	return desc, order, nil
}

// descendantsByParent reads the parent of every process.
func descendantsByParent() (map[int]bool, []int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil, err
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := readPPID(pid); ok {
			parent[pid] = ppid
		}
	}
	self := os.Getpid()
	desc := map[int]bool{}
	var order []int
	for pid := range parent {
		// Walk up until this process, init, or a known answer.
		for p, steps := parent[pid], 0; p > 0 && steps < len(parent); p, steps = parent[p], steps+1 {
			if p == self || desc[p] {
				desc[pid] = true
				order = append(order, pid)
				break
			}
		}
	}
	return desc, order, nil
}

// readPPID reads the 4th field of /proc/PID/stat (after the command name,
// which may hold spaces and parentheses).
func readPPID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
