package fsops

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexd/codexd/execproto"
)

// TestWriteToAFIFOWithAReaderIsBounded: a FIFO whose reader never reads
// accepts 64 KiB, then blocks the writer. fs/writeFile onto it must end
// when its request's context does, not park the handler for good.
func TestWriteToAFIFOWithAReaderIsBounded(t *testing.T) {
	e := newEnv(t)
	ok(t, syscall.Mkfifo(e.path("fifo"), 0o644))
	// A reader that never reads (non-blocking, so opening does not wait
	// for a writer).
	r, err := os.OpenFile(e.path("fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	ok(t, err)
	defer r.Close()
	data := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 1<<20)))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.svc.WriteFile(ctx, execproto.FsWriteFileParams{Path: e.uri("fifo"), DataBase64: data})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("1 MiB written into a FIFO nobody reads")
		}
		t.Logf("writeFile: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("fs/writeFile onto a FIFO with a reader ignored its context")
	}
	// A copy onto it is refused: data only lands in regular files.
	e.write("src", "data")
	if _, err := e.svc.Copy(ctx, execproto.FsCopyParams{SourcePath: e.uri("src"), DestinationPath: e.uri("fifo")}); err == nil {
		t.Fatal("fs/copy onto a FIFO succeeded")
	}
}
