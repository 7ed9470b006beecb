package environment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// FileName is the environments file inside $CODEX_HOME, as Codex reads it.
const FileName = "environments.toml"

// File is what environments.toml declares.
type File struct {
	// Default is the environment of a thread that names none: "" for
	// `local` (or none when IncludeLocal is false), "none" for none.
	Default string
	// IncludeLocal is include_local (default true).
	IncludeLocal bool
	Remotes      []Remote
}

// Remote is one declared remote exec-server.
type Remote struct {
	ID  string
	URL string
	// ConnectTimeout is connect_timeout_sec; 0 means the default.
	ConnectTimeout time.Duration
}

type fileTOML struct {
	Default      *string   `toml:"default"`
	IncludeLocal *bool     `toml:"include_local"`
	Environments []envTOML `toml:"environments"`
}

type envTOML struct {
	ID                   string            `toml:"id"`
	URL                  *string           `toml:"url"`
	Program              *string           `toml:"program"`
	Args                 []string          `toml:"args"`
	Env                  map[string]string `toml:"env"`
	Cwd                  *string           `toml:"cwd"`
	ConnectTimeoutSec    *float64          `toml:"connect_timeout_sec"`
	InitializeTimeoutSec *float64          `toml:"initialize_timeout_sec"`
}

// LoadFile reads codexHome's environments.toml; a missing file is the
// default (local alone), with ok false.
func LoadFile(codexHome string) (f File, ok bool, err error) {
	path := filepath.Join(codexHome, FileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{IncludeLocal: true}, false, nil
	}
	if err != nil {
		return File{}, false, fmt.Errorf("failed to read environment config `%s`: %v", path, err)
	}
	f, err = ParseFile(b)
	if err != nil {
		return File{}, false, fmt.Errorf("failed to parse environment config `%s`: %v", path, err)
	}
	return f, true, nil
}

// ParseFile parses the text of an environments.toml, with Codex's rules:
// unknown keys, duplicate or reserved ids and a default that names no
// environment are errors.
func ParseFile(b []byte) (File, error) {
	var t fileTOML
	md, err := toml.Decode(string(b), &t)
	if err != nil {
		return File{}, err
	}
	if extra := md.Undecoded(); len(extra) > 0 {
		return File{}, fmt.Errorf("unknown field `%s`", extra[0].String())
	}
	f := File{IncludeLocal: t.IncludeLocal == nil || *t.IncludeLocal}
	ids := map[string]bool{}
	if f.IncludeLocal {
		ids[LocalID] = true
	}
	for _, e := range t.Environments {
		if err := ValidateID(e.ID); err != nil {
			return File{}, err
		}
		if e.Program != nil {
			// Codex starts such an exec-server itself over stdio; codexd
			// connects only to servers that already run.
			return File{}, fmt.Errorf("environment `%s`: program (a stdio exec-server) is not supported by codexd; run `codexd exec-server --listen` and give its url", e.ID)
		}
		if e.Args != nil || e.Env != nil || e.Cwd != nil {
			return File{}, fmt.Errorf("environment `%s` args, env, and cwd require program", e.ID)
		}
		if e.URL == nil {
			return File{}, fmt.Errorf("environment `%s` must set exactly one of url or program", e.ID)
		}
		url := strings.TrimSpace(*e.URL)
		if err := ValidateURL(url); err != nil {
			return File{}, err
		}
		r := Remote{ID: e.ID, URL: url}
		if e.ConnectTimeoutSec != nil {
			s := *e.ConnectTimeoutSec
			if s < 0 || s > 86400 || s != s {
				return File{}, fmt.Errorf("environment `%s` connect_timeout_sec %v is out of range", e.ID, s)
			}
			r.ConnectTimeout = time.Duration(s * float64(time.Second))
		}
		if ids[e.ID] {
			return File{}, fmt.Errorf("environment id `%s` is duplicated", e.ID)
		}
		ids[e.ID] = true
		f.Remotes = append(f.Remotes, r)
	}
	if t.Default != nil {
		d := strings.TrimSpace(*t.Default)
		switch {
		case d == "":
			return File{}, errors.New("default environment id cannot be empty")
		case strings.EqualFold(d, "none"):
			f.Default = "none"
		case !ids[d]:
			return File{}, fmt.Errorf("default environment `%s` is not configured", d)
		default:
			f.Default = d
		}
	} else if !f.IncludeLocal {
		f.Default = "none"
	}
	return f, nil
}

// ValidateID checks an environment id as Codex does: 1 to 64 ASCII
// letters, digits, '-' or '_', and not `local` or `none`.
func ValidateID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return errors.New("environment id cannot be empty")
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("environment id `%s` must not contain surrounding whitespace", id)
	case id == LocalID || strings.EqualFold(id, "none"):
		return fmt.Errorf("environment id `%s` is reserved", id)
	case len(id) > 64:
		return fmt.Errorf("environment id `%s` cannot be longer than 64 characters", id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("environment id `%s` must contain only ASCII letters, numbers, '-' or '_'", id)
		}
	}
	return nil
}

// ValidateURL checks an exec-server URL: ws:// or wss:// as in Codex, and
// also unix:// (codexd's exec-server listens on Unix sockets too).
func ValidateURL(url string) error {
	if url == "" {
		return errors.New("environment url cannot be empty")
	}
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || (scheme != "ws" && scheme != "wss" && scheme != "unix") || rest == "" {
		return fmt.Errorf("environment url `%s` must use ws://, wss:// or unix://", url)
	}
	return nil
}
