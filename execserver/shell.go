package execserver

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// userShell is the login shell that environmentInfo reports. Codex reads
// it from the password database (getpwuid_r), not from $SHELL, so a server
// started by a service manager with no SHELL still reports the user's real
// shell; we follow it, falling back to $SHELL and then /bin/sh only when
// the database has no entry for us.
func userShell() string {
	if sh := passwdShell("/etc/passwd", os.Getuid()); sh != "" {
		return sh
	}
	if sh := os.Getenv("SHELL"); sh != "" {
		return sh
	}
	return "/bin/sh"
}

// passwdShell returns the shell field of uid's line in a passwd(5) file,
// or "" when there is none.
func passwdShell(path string, uid int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	want := strconv.Itoa(uid)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) == 7 && fields[2] == want {
			return strings.TrimSpace(fields[6])
		}
	}
	return ""
}
