//go:build !unix

package rpcserve

import "io"

// closeableStdin: elsewhere stdin is served as it is; closing the server
// ends the connection when the client hangs up.
func closeableStdin(r io.Reader) (io.Reader, io.Closer) {
	if c, ok := r.(io.Closer); ok {
		return r, c
	}
	return r, nil
}
