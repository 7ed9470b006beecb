package appproto

// FsPathParams are the params of fs/readFile, fs/getMetadata and
// fs/readDirectory. Paths are absolute native paths.
type FsPathParams struct {
	Path string `json:"path"`
}

// FsReadFileResponse is the result of fs/readFile.
type FsReadFileResponse struct {
	DataBase64 string `json:"dataBase64"`
}

// FsWriteFileParams are the params of fs/writeFile.
type FsWriteFileParams struct {
	Path       string `json:"path"`
	DataBase64 string `json:"dataBase64"`
}

// FsCreateDirectoryParams are the params of fs/createDirectory.
type FsCreateDirectoryParams struct {
	Path      string `json:"path"`
	Recursive *bool  `json:"recursive,omitzero"`
}

// FsGetMetadataResponse is the result of fs/getMetadata.
type FsGetMetadataResponse struct {
	IsDirectory  bool  `json:"isDirectory"`
	IsFile       bool  `json:"isFile"`
	IsSymlink    bool  `json:"isSymlink"`
	CreatedAtMs  int64 `json:"createdAtMs"`
	ModifiedAtMs int64 `json:"modifiedAtMs"`
}

// FsReadDirectoryResponse is the result of fs/readDirectory.
type FsReadDirectoryResponse struct {
	Entries []FsReadDirectoryEntry `json:"entries"`
}

// FsReadDirectoryEntry is one entry of a directory.
type FsReadDirectoryEntry struct {
	FileName    string `json:"fileName"`
	IsDirectory bool   `json:"isDirectory"`
	IsFile      bool   `json:"isFile"`
}

// FsRemoveParams are the params of fs/remove.
type FsRemoveParams struct {
	Path      string `json:"path"`
	Recursive *bool  `json:"recursive,omitzero"`
	Force     *bool  `json:"force,omitzero"`
}

// FsCopyParams are the params of fs/copy.
type FsCopyParams struct {
	SourcePath      string `json:"sourcePath"`
	DestinationPath string `json:"destinationPath"`
	Recursive       bool   `json:"recursive,omitzero"`
}
