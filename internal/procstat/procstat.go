// Package procstat reads what codexd's side-by-side benchmarks measure of
// a process from Linux's /proc: memory fields and the machine's load.
//
// It is for bench/ only: the codexd binary must never import it. It reads
// and never signals or changes anything.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StatusKB reads a "Name:   123 kB" field of /proc/PID/status (VmRSS,
// RssAnon, VmHWM...).
func StatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// RSSKB is pid's VmRSS in KiB, or 0 when it cannot be read (the process
// is gone).
func RSSKB(pid int) int64 {
	v, _ := StatusKB(pid, "VmRSS")
	return v
}

// Loadavg is the machine's 1, 5 and 15 minute load averages, as one
// string, or "?".
func Loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
