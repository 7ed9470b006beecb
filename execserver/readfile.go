package execserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/jsonrpc"
)

// DefaultMaxResponseBytes is the default of Config.MaxResponseBytes: room
// for one fs/readFile of the largest file Codex reads (512 MiB, 683 MiB
// once base64-encoded) with a margin.
const DefaultMaxResponseBytes = 768 << 20

// registerReadFile registers fs/readFile, whose response can be the
// largest of all: a file of up to 512 MiB, base64-encoded.
//
// The response's size is known before the file is read (its size, when
// stat tells it), so the handler first reserves it in the connection's
// budget for responses in flight (Config.MaxResponseBytes): however many
// reads run at once, they hold no more than the budget, and one that could
// never fit is refused with the limit named, before anything is read. Then
// the file is read and encoded a chunk at a time straight into the buffer
// the response is framed in: a file of n bytes costs about 4n/3, once.
func (c *connection) registerReadFile(mux *jsonrpc.Mux) {
	m := jsonrpc.Method[execproto.FsReadFileParams, any](execproto.MethodFsReadFile)
	handle(c, mux, m, "filesystem",
		func(ctx context.Context, _ *session, p execproto.FsReadFileParams) (any, error) {
			if err := checkFSSandbox(p.Sandbox, fsAccess{uri: p.Path}); err != nil {
				return nil, err
			}
			r, err := c.srv.fs.OpenReadFile(ctx, p)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			const head, tail = `{"dataBase64":"`, `"}`
			size := int64(len(head)) + fsops.EncodedLen(r.Size()) + int64(len(tail))
			// The response's frame ({"id":...,"result":...}) is small;
			// 256 bytes cover it with any id the engine accepts here.
			if err := jsonrpc.ReserveResponse(ctx, size+256); err != nil {
				var tl *jsonrpc.TooLargeError
				if errors.As(err, &tl) {
					return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, fmt.Sprintf(
						"file is too large to read on this connection: its response would take %d bytes, over the limit of %d bytes for responses in flight",
						tl.Size, tl.Limit))
				}
				return nil, err
			}
			rb := jsonrpc.NewResultBuffer(int(size))
			rb.B = append(rb.B, head...)
			if rb.B, err = r.AppendBase64(rb.B); err != nil {
				return nil, err
			}
			rb.B = append(rb.B, tail...)
			return rb, nil
		})
}
