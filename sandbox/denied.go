package sandbox

import "strings"

// deniedKeywords are the texts Codex looks for (lowercased) in a failed
// command's output to blame the sandbox.
var deniedKeywords = []string{
	"operation not permitted", // EPERM: seccomp, and Landlock on some calls
	"permission denied",       // EACCES: Landlock's usual answer
	"read-only file system",   // EROFS
	"seccomp",
	"sandbox",
	"landlock",
	"failed to write file",
}

// LikelyDenied guesses whether a command that ran confined failed because
// of the sandbox, as Codex's is_likely_sandbox_denied does: never for an
// unconfined command or exit code 0; yes if stdout or stderr (or the
// aggregated output) mentions one of "operation not permitted",
// "permission denied", "read-only file system", "seccomp", "sandbox",
// "landlock" or "failed to write file" (any case); otherwise no, except
// for 159 (128+SIGSYS: a seccomp kill). Exit codes 2, 126 and 127 without
// such a keyword are the shell's own failures. It is a heuristic: a command
// may print "permission denied" for its own reasons, and a denied program
// may fail silently. The core reports a yes as sandboxDenied and, under
// on-failure and untrusted, offers to run the command again unsandboxed.
func LikelyDenied(mode Mode, exitCode int, outputs ...string) bool {
	if !mode.Confined() || exitCode == 0 {
		return false
	}
	for _, out := range outputs {
		lower := strings.ToLower(out)
		for _, k := range deniedKeywords {
			if strings.Contains(lower, k) {
				return true
			}
		}
	}
	switch exitCode {
	case 2, 126, 127:
		return false
	}
	return exitCode == 128+31
}
