package execserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/jsonrpc"
)

func TestReadFileSizesAndBudget(t *testing.T) {
	dir := t.TempDir()
	_, url := newTestServer(t, Config{MaxResponseBytes: 1 << 20})
	c := connect(t, url, "")
	ctx := context.Background()
	// Sizes around the reader's 192 KiB chunks and base64's 3-byte groups.
	for _, n := range []int{0, 1, 2, 3, 4, 3*64<<10 - 1, 3 * 64 << 10, 3*64<<10 + 1, 700 << 10} {
		data := bytes.Repeat([]byte{0, 1, 2, 0xff, 'x'}, n/5+1)[:n]
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: execproto.PathURI(p)})
		if err != nil || res.DataBase64 != base64.StdEncoding.EncodeToString(data) {
			t.Fatalf("%d bytes: %d base64 bytes, %v", n, len(res.DataBase64), err)
		}
	}
	// A file whose response alone is over the connection's budget is
	// refused before it is read, naming the limit; nothing is truncated.
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("z"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: execproto.PathURI(big)})
	if rpcCode(err) != jsonrpc.CodeInvalidRequest || !strings.Contains(err.Error(), "over the limit of 1048576 bytes for responses in flight") {
		t.Fatalf("read over the budget: %v", err)
	}
	// Reads that fit one at a time but not all at once wait for their
	// share and all succeed.
	mid := filepath.Join(dir, "mid")
	want := bytes.Repeat([]byte("m"), 500<<10)
	if err := os.WriteFile(mid, want, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := execproto.FsReadFile.Call(ctx, c.conn, execproto.FsReadFileParams{Path: execproto.PathURI(mid)})
			if err == nil && res.DataBase64 != base64.StdEncoding.EncodeToString(want) {
				err = os.ErrInvalid
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent read: %v", err)
		}
	}
}
