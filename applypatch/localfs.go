package applypatch

import (
	"context"
	"os"
)

// LocalFS is an [FS] on this machine's filesystem, through the os package.
type LocalFS struct{}

var _ FS = LocalFS{}

func (LocalFS) ReadFile(_ context.Context, path string) ([]byte, error) { return os.ReadFile(path) }

func (LocalFS) WriteFile(_ context.Context, path string, data []byte) error {
	return os.WriteFile(path, data, 0o666)
}

func (LocalFS) Remove(_ context.Context, path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return &os.PathError{Op: "remove", Path: path, Err: errIsDir}
	}
	return os.Remove(path)
}

func (LocalFS) MkdirAll(_ context.Context, path string) error { return os.MkdirAll(path, 0o777) }

func (LocalFS) Stat(_ context.Context, path string) (FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{IsDir: info.IsDir()}, nil
}
