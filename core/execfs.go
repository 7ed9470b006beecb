package core

import (
	"context"

	"github.com/codexd/codexd/applypatch"
	"github.com/codexd/codexd/execclient"
)

// execFS is the filesystem of the exec-server's machine, through the
// client's typed fs API: patches are read and applied where commands run,
// which may be another machine. The wire (URIs, base64, the errors' kinds)
// is the client's business.
type execFS struct {
	dial func(ctx context.Context) (*execclient.Client, error)
}

var _ applypatch.FS = execFS{}

func (f execFS) ReadFile(ctx context.Context, path string) ([]byte, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return nil, err
	}
	return c.ReadFile(ctx, path)
}

func (f execFS) WriteFile(ctx context.Context, path string, data []byte) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.WriteFile(ctx, path, data, execclient.WriteOptions{})
}

func (f execFS) Remove(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.Remove(ctx, path, execclient.RemoveOptions{})
}

func (f execFS) MkdirAll(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.CreateDirectory(ctx, path, execclient.MkdirOptions{Parents: true})
}

func (f execFS) Stat(ctx context.Context, path string) (applypatch.FileInfo, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return applypatch.FileInfo{}, err
	}
	r, err := c.Stat(ctx, path, true)
	if err != nil {
		return applypatch.FileInfo{}, err
	}
	return applypatch.FileInfo{IsDir: r.IsDirectory}, nil
}

// metadata describes path; follow false describes a final symlink itself.
func (f execFS) metadata(ctx context.Context, path string, follow bool) (execclient.FileInfo, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return execclient.FileInfo{}, err
	}
	return c.Stat(ctx, path, follow)
}

// canonicalize is the path, which must exist, with every symlink and ".."
// resolved on the exec-server's machine.
func (f execFS) canonicalize(ctx context.Context, path string) (string, error) {
	c, err := f.dial(ctx)
	if err != nil {
		return "", err
	}
	return c.Canonicalize(ctx, path)
}

// writeNoFollow writes path, refusing a symlink at any of its components.
func (f execFS) writeNoFollow(ctx context.Context, path string, data []byte) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.WriteFile(ctx, path, data, execclient.WriteOptions{NoFollow: true})
}

// removeNoFollow removes the file path, refusing a symlink at any of its
// components (the last one too).
func (f execFS) removeNoFollow(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.Remove(ctx, path, execclient.RemoveOptions{NoFollow: true})
}

// mkdirAllNoFollow creates path and its missing parents, refusing a
// symlink at any of its components.
func (f execFS) mkdirAllNoFollow(ctx context.Context, path string) error {
	c, err := f.dial(ctx)
	if err != nil {
		return err
	}
	return c.CreateDirectory(ctx, path, execclient.MkdirOptions{Parents: true, NoFollow: true})
}
