// Package sandbox confines the commands an agent runs, with Landlock, under
// Codex's three sandbox modes:
//
//   - read-only: read (and execute) everywhere, write nowhere but a few
//     harmless devices (/dev/null, /dev/zero, /dev/full, /dev/tty,
//     /dev/random, /dev/urandom) and the terminal its stdio is on, if any;
//     no network unless NetworkAccess.
//   - workspace-write: read-only, plus writes under the workspace (the
//     policy's cwd), the extra WritableRoots, /tmp (and /dev/shm) unless
//     ExcludeSlashTmp, and $TMPDIR unless ExcludeTmpdirEnvVar; no network
//     unless NetworkAccess.
//   - danger-full-access: no confinement.
//
// Landlock restricts the calling thread and everything it later executes,
// and Go cannot run code between fork and exec, so a command is confined by
// running this program again as a helper: [Wrap] turns a command into
//
//	[self, "__codexd_sandbox", POLICY-JSON, "--", argv...]
//
// and [RunHelperIfRequested], called first thing in main (and in TestMain),
// recognises that form, confines its own thread and execve's the command.
// The command inherits stdin, stdout and stderr only: Landlock checks a file
// when it is opened, so any other descriptor the helper inherited would
// write wherever it points. It runs without capabilities, even as root:
// Landlock leaves them, and root's would undo it (mknod a disk in the
// workspace, load a kernel module); a root without CAP_SETPCAP to drop them
// is refused.
// The helper runs on the machine that runs the command (the exec-server's,
// possibly remote), so /tmp, $TMPDIR and Landlock support are those of that
// machine. It exits 126 with a "codexd sandbox: ..." message on stderr when
// it cannot confine or start the command, and 127 when the command is not
// found.
//
// Network denial uses Landlock's TCP bind/connect rights (ABI 4+) and, on
// amd64 and arm64, a seccomp filter that refuses socket(2) and
// socketpair(2) for every family but AF_UNIX, connect(2), and
// io_uring_setup(2), as Codex's Linux sandbox does: Landlock alone leaves
// UDP, raw sockets and Multipath TCP open, and a UNIX socket outside the
// sandbox reaches services that act for the command (the Docker daemon,
// the session bus behind systemd-run --user) and so escape it. Pipes and
// socketpair(2) still work; a command cannot connect even to a UNIX socket
// it created. Landlock also refuses abstract UNIX sockets (ABI 6+) and
// pathname ones (9+, datagrams too) to outside the sandbox.
//
// The package must never run a command unconfined under read-only or
// workspace-write: where the kernel has no Landlock (or an error stops any
// step of the confinement) it refuses, with a clear error, rather than
// degrade to best effort. It knows nothing of turns, approvals, JSON-RPC or
// the exec-server: it rewrites an argv, confines a process, and guesses
// whether a failure was the sandbox's doing ([LikelyDenied]).
//
// Read-only subpaths: as in Codex, the .git of a writable root (the
// directory, or the one a .git file points to), its .codex and its .agents
// stay read-only under workspace-write, so that a command cannot plant a
// git hook that runs unconfined at the user's next commit. Landlock can
// only grant, never carve out, so the helper gives the command a mount
// namespace of its own in which each of them that exists is bind-mounted
// onto itself read-only (readonly_linux.go); without the privilege to
// unshare one, it starts itself again in a user namespace of its own, and
// where neither is possible the command is refused. A missing .codex of the
// workspace cannot be mounted over and can be created; the approval layer
// still refuses to auto-approve patches there ([WritableRoot.IsPathWritable]).
package sandbox
