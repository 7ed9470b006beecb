package execproto

import "encoding/json"

// Filesystem methods of the exec-server, as Codex 0.169 names them.
//
// Every path on the wire is a `file://` URI (Codex's PathUri): a bare native
// path is rejected with -32602 "invalid URI: relative URL without a base".
const (
	MethodFsReadFile        = "fs/readFile"
	MethodFsWriteFile       = "fs/writeFile"
	MethodFsCreateDirectory = "fs/createDirectory"
	MethodFsGetMetadata     = "fs/getMetadata"
	MethodFsReadDirectory   = "fs/readDirectory"
	MethodFsRemove          = "fs/remove"
	MethodFsCopy            = "fs/copy"
	MethodFsCanonicalize    = "fs/canonicalize"
	MethodFsOpen            = "fs/open"
	MethodFsReadBlock       = "fs/readBlock"
	MethodFsWriteBlock      = "fs/writeBlock"
	MethodFsClose           = "fs/close"
	MethodFsWalk            = "fs/walk"
	MethodFsWatchMissing    = "fs/watchMissing"

	// MethodFsMissingChanged is the server-to-client notification sent when
	// a path registered with fs/watchMissing appears.
	MethodFsMissingChanged = "fs/missingChanged"
)

// FsReadFileParams are the params of fs/readFile. Path is required.
type FsReadFileParams struct {
	Path string `json:"path"`
	// Sandbox is Codex's FileSystemSandboxContext, carried opaquely.
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
	// FollowSymlinks defaults to true. When false no component of Path may
	// be a symbolic link.
	FollowSymlinks *bool `json:"followSymlinks,omitempty"`
}

// FsReadFileResponse is the result of fs/readFile.
type FsReadFileResponse struct {
	// DataBase64 is the whole file, standard base64 with padding.
	DataBase64 string `json:"dataBase64"`
}

// FsWriteFileParams are the params of fs/writeFile. Path and DataBase64 are
// required.
type FsWriteFileParams struct {
	Path string `json:"path"`
	// DataBase64 is standard base64. It is a string, not bytes, because
	// Codex decodes it in the handler: bad base64 is -32600, not -32602.
	DataBase64     string          `json:"dataBase64"`
	Sandbox        json.RawMessage `json:"sandbox,omitempty"`
	FollowSymlinks *bool           `json:"followSymlinks,omitempty"`
}

// FsWriteFileResponse is the (empty) result of fs/writeFile.
type FsWriteFileResponse struct{}

// FsCreateDirectoryParams are the params of fs/createDirectory. Path is
// required.
type FsCreateDirectoryParams struct {
	Path string `json:"path"`
	// Recursive defaults to true (create parents, succeed if it exists).
	Recursive      *bool           `json:"recursive,omitempty"`
	Sandbox        json.RawMessage `json:"sandbox,omitempty"`
	FollowSymlinks *bool           `json:"followSymlinks,omitempty"`
}

// FsCreateDirectoryResponse is the (empty) result of fs/createDirectory.
type FsCreateDirectoryResponse struct{}

// FsGetMetadataParams are the params of fs/getMetadata. Path is required.
type FsGetMetadataParams struct {
	Path           string          `json:"path"`
	Sandbox        json.RawMessage `json:"sandbox,omitempty"`
	FollowSymlinks *bool           `json:"followSymlinks,omitempty"`
}

// FsGetMetadataResponse is the result of fs/getMetadata. All fields are
// always present. IsDirectory, IsFile and Size describe the symlink's target;
// IsSymlink describes the path itself.
type FsGetMetadataResponse struct {
	IsDirectory bool   `json:"isDirectory"`
	IsFile      bool   `json:"isFile"`
	IsSymlink   bool   `json:"isSymlink"`
	Size        uint64 `json:"size"`
	// CreatedAtMs and ModifiedAtMs are Unix milliseconds, 0 when unknown.
	CreatedAtMs  int64 `json:"createdAtMs"`
	ModifiedAtMs int64 `json:"modifiedAtMs"`
}

// FsCanonicalizeParams are the params of fs/canonicalize. Path is required.
type FsCanonicalizeParams struct {
	Path    string          `json:"path"`
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// FsCanonicalizeResponse is the result of fs/canonicalize.
type FsCanonicalizeResponse struct {
	Path string `json:"path"`
}

// FsReadDirectoryParams are the params of fs/readDirectory. Path is
// required.
type FsReadDirectoryParams struct {
	Path    string          `json:"path"`
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// FsReadDirectoryEntry is one entry of a directory listing. IsDirectory and
// IsFile describe the target of a symlink; entries whose target cannot be
// read (dangling symlinks) are left out.
type FsReadDirectoryEntry struct {
	FileName    string `json:"fileName"`
	IsDirectory bool   `json:"isDirectory"`
	IsFile      bool   `json:"isFile"`
}

// FsReadDirectoryResponse is the result of fs/readDirectory. Entries is
// always an array, never null.
type FsReadDirectoryResponse struct {
	Entries []FsReadDirectoryEntry `json:"entries"`
}

// FsRemoveParams are the params of fs/remove. Path is required.
type FsRemoveParams struct {
	Path string `json:"path"`
	// Recursive defaults to true.
	Recursive *bool `json:"recursive,omitempty"`
	// Force defaults to true: a missing path is not an error.
	Force          *bool           `json:"force,omitempty"`
	Sandbox        json.RawMessage `json:"sandbox,omitempty"`
	FollowSymlinks *bool           `json:"followSymlinks,omitempty"`
}

// FsRemoveResponse is the (empty) result of fs/remove.
type FsRemoveResponse struct{}

// FsCopyParams are the params of fs/copy. SourcePath, DestinationPath and
// Recursive are all required by Codex (Recursive has no default there).
type FsCopyParams struct {
	SourcePath      string          `json:"sourcePath"`
	DestinationPath string          `json:"destinationPath"`
	Recursive       bool            `json:"recursive"`
	Sandbox         json.RawMessage `json:"sandbox,omitempty"`
}

// FsCopyResponse is the (empty) result of fs/copy.
type FsCopyResponse struct{}

// FsOpenMode selects what fs/open opens a handle for.
type FsOpenMode string

const (
	// FsOpenRead opens an existing regular file for fs/readBlock. It is the
	// default when mode is omitted.
	FsOpenRead FsOpenMode = "read"
	// FsOpenReplace creates or truncates the file for fs/writeBlock.
	FsOpenReplace FsOpenMode = "replace"
)

// FsOpenParams are the params of fs/open. HandleID (chosen by the client,
// at most 32 bytes, may be empty) and Path are required.
type FsOpenParams struct {
	HandleID string          `json:"handleId"`
	Path     string          `json:"path"`
	Mode     FsOpenMode      `json:"mode,omitempty"`
	Sandbox  json.RawMessage `json:"sandbox,omitempty"`
}

// FsOpenResponse is the result of fs/open; it echoes the handle id.
type FsOpenResponse struct {
	HandleID string `json:"handleId"`
}

// FsReadBlockParams are the params of fs/readBlock; all fields are required.
// Len must be between 1 and 1048576.
type FsReadBlockParams struct {
	HandleID string `json:"handleId"`
	Offset   uint64 `json:"offset"`
	Len      uint64 `json:"len"`
}

// FsReadBlockResponse is the result of fs/readBlock. Chunk is base64 on the
// wire; EOF is true when fewer than Len bytes were available.
type FsReadBlockResponse struct {
	Chunk []byte `json:"chunk"`
	EOF   bool   `json:"eof"`
}

// FsWriteBlockParams are the params of fs/writeBlock; all fields are
// required. Chunk (base64 on the wire) must hold 1 to 1048576 bytes; it is
// written at Offset, leaving a hole of zeros past the end of the file.
type FsWriteBlockParams struct {
	HandleID string `json:"handleId"`
	Offset   uint64 `json:"offset"`
	Chunk    []byte `json:"chunk"`
}

// FsWriteBlockResponse is the (empty) result of fs/writeBlock.
type FsWriteBlockResponse struct{}

// FsCloseParams are the params of fs/close. HandleID is required; closing
// an unknown handle succeeds.
type FsCloseParams struct {
	HandleID string `json:"handleId"`
}

// FsCloseResponse is the (empty) result of fs/close.
type FsCloseResponse struct{}

// WalkOptions bound fs/walk. MaxDepth, MaxDirectories, MaxEntries and
// FollowDirectorySymlinks are required by Codex.
type WalkOptions struct {
	// MaxDepth is how many directory levels below the root may be
	// traversed (0 lists the root's children only); at most 64.
	MaxDepth uint64 `json:"maxDepth"`
	// MaxDirectories counts traversed directories including the root;
	// 1 to 10000.
	MaxDirectories uint64 `json:"maxDirectories"`
	// MaxEntries counts examined directory entries; 1 to 50000.
	MaxEntries              uint64 `json:"maxEntries"`
	FollowDirectorySymlinks bool   `json:"followDirectorySymlinks"`
	// PruneHiddenDirectories lists directories whose name starts with "."
	// but does not descend into them.
	PruneHiddenDirectories bool `json:"pruneHiddenDirectories,omitzero"`
}

// FsWalkParams are the params of fs/walk. Path and Options are required.
type FsWalkParams struct {
	Path    string          `json:"path"`
	Options WalkOptions     `json:"options"`
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// WalkEntryKind is the kind of a walked entry.
type WalkEntryKind string

const (
	WalkEntryDirectory WalkEntryKind = "directory"
	WalkEntryFile      WalkEntryKind = "file"
)

// WalkEntry is one file or directory found by fs/walk.
type WalkEntry struct {
	Path string        `json:"path"`
	Kind WalkEntryKind `json:"kind"`
}

// WalkError is a descendant fs/walk could not read.
type WalkError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// FsWalkResponse is the result of fs/walk (Codex's WalkOutcome). Entries and
// Errors are always arrays, never null.
type FsWalkResponse struct {
	Entries   []WalkEntry `json:"entries"`
	Errors    []WalkError `json:"errors"`
	Truncated bool        `json:"truncated"`
}

// FsWatchMissingParams are the params of fs/watchMissing. WatchID (an
// unsigned integer chosen by the client) and Missing are required.
type FsWatchMissingParams struct {
	WatchID uint64 `json:"watchId"`
	// Missing lists `file://` URIs of paths that do not exist yet.
	Missing []string        `json:"missing"`
	Sandbox json.RawMessage `json:"sandbox,omitempty"`
}

// FsWatchMissingResponse is the result of fs/watchMissing. Watching is
// false when nothing was armed: the id is already in use, the list is empty,
// or no listed path can appear (it exists already, or an ancestor is not a
// directory).
type FsWatchMissingResponse struct {
	Watching bool `json:"watching"`
}

// FsMissingChangedNotification is the params of the fs/missingChanged
// notification: one of the watch's paths appeared. The watch is then spent.
type FsMissingChangedNotification struct {
	WatchID uint64 `json:"watchId"`
}
