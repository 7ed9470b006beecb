//go:build !unix

package promptcli

import (
	"io"
	"os"
)

// isTerminal reports whether r is a character device, the nearest test
// available here.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
