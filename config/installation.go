package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// InstallationIDFile is the file under $CODEX_HOME that holds the
// installation id, as Codex keeps it.
const InstallationIDFile = "installation_id"

// InstallationID returns the installation id kept in home: the UUID in
// $CODEX_HOME/installation_id, created (mode 0644, as Codex does) when the
// file is missing. A file that holds something other than a UUID is
// replaced only if it is empty; otherwise it is an error, so that nothing
// of the user's is overwritten.
func InstallationID(home string) (string, error) {
	path := filepath.Join(home, InstallationIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if u, perr := uuid.Parse(s); perr == nil {
			return u.String(), nil
		}
		if s != "" {
			return "", fmt.Errorf("%s does not hold a UUID", path)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	id := uuid.NewString()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(id); err != nil {
		f.Close()
		return "", err
	}
	return id, f.Close()
}
