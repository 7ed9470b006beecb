// Package fsops carries out the exec-server's fs/* methods (Codex 0.169's
// contract) on the local filesystem: whole-file reads and writes, metadata,
// directory listings, bounded walks, removal, copying, block I/O through
// per-connection handles, and watches for paths that do not exist yet.
//
// It knows nothing of JSON-RPC: each method takes the execproto params and
// returns the execproto result or an *Error carrying the JSON-RPC code and
// message Codex would send.
//
// It must never touch a path outside Config.Roots when roots are set, and
// must never remove "/", a mount point, a directory holding a mount point,
// the home directory or a root (or anything above them), nor copy a file
// onto itself, whatever the client asks. Every path is resolved (".." and
// symlinks) before it is checked and the resolved path is what gets used,
// so a check and its operation agree on the file.
package fsops
