package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FileName is the sign-in file's name inside CODEX_HOME.
const FileName = "auth.json"

// Mode is auth.json's auth_mode, with Codex's values.
type Mode string

const (
	// ModeAPIKey is an OpenAI API key (`codex login --with-api-key`).
	ModeAPIKey Mode = "apikey"
	// ModeChatGPT is a ChatGPT sign-in: OAuth tokens that are refreshed.
	ModeChatGPT Mode = "chatgpt"
)

// Tokens are the ChatGPT OAuth tokens of auth.json.
type Tokens struct {
	IDToken      string  `json:"id_token"`
	AccessToken  string  `json:"access_token"`
	RefreshToken string  `json:"refresh_token"`
	AccountID    *string `json:"account_id"`
}

// File is auth.json. Unknown members are kept in rest and written back.
type File struct {
	AuthMode     Mode
	OpenAIAPIKey string
	Tokens       *Tokens
	LastRefresh  *time.Time

	rest map[string]json.RawMessage
}

// known are the members File decodes itself.
var known = []string{"auth_mode", "OPENAI_API_KEY", "tokens", "last_refresh"}

// maxFileBytes bounds what is read of auth.json; Codex's is well under 16 KiB.
const maxFileBytes = 1 << 20

// Path is auth.json in home.
func Path(home string) string { return filepath.Join(home, FileName) }

// Read reads home's auth.json; (nil, nil) when there is none.
func Read(home string) (*File, error) {
	data, err := os.ReadFile(Path(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", Path(home), maxFileBytes)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path(home), err)
	}
	return f, nil
}

// Parse decodes auth.json's content.
func Parse(data []byte) (*File, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if raw == nil {
		return nil, errors.New("not a JSON object")
	}
	f := &File{rest: map[string]json.RawMessage{}}
	for k, v := range raw {
		f.rest[k] = v
	}
	var mode *string
	if err := member(raw, "auth_mode", &mode); err != nil {
		return nil, err
	}
	if mode != nil {
		f.AuthMode = Mode(*mode)
	}
	var key *string
	if err := member(raw, "OPENAI_API_KEY", &key); err != nil {
		return nil, err
	}
	if key != nil {
		f.OpenAIAPIKey = *key
	}
	if err := member(raw, "tokens", &f.Tokens); err != nil {
		return nil, err
	}
	if f.Tokens != nil && (f.Tokens.AccessToken == "" && f.Tokens.RefreshToken == "") {
		return nil, errors.New("tokens: no access_token or refresh_token")
	}
	if err := member(raw, "last_refresh", &f.LastRefresh); err != nil {
		return nil, err
	}
	for _, k := range known {
		delete(f.rest, k)
	}
	return f, nil
}

func member(raw map[string]json.RawMessage, name string, dst any) error {
	v, ok := raw[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// EffectiveMode is the mode the file signs in with, as Codex resolves it:
// auth_mode when set, else an API key when there is one, else ChatGPT
// when there are tokens; "" when the file signs in with nothing.
func (f *File) EffectiveMode() Mode {
	if f == nil {
		return ""
	}
	switch f.AuthMode {
	case ModeAPIKey:
		if f.OpenAIAPIKey != "" {
			return ModeAPIKey
		}
		return ""
	case ModeChatGPT:
		if f.Tokens != nil {
			return ModeChatGPT
		}
		return ""
	}
	if f.OpenAIAPIKey != "" {
		return ModeAPIKey
	}
	if f.Tokens != nil {
		return ModeChatGPT
	}
	return ""
}

// Marshal encodes f as Codex writes auth.json (pretty, two-space indent),
// with the members it does not know kept.
func (f *File) Marshal() ([]byte, error) {
	out := map[string]any{}
	for k, v := range f.rest {
		out[k] = v
	}
	if f.AuthMode != "" {
		out["auth_mode"] = f.AuthMode
	}
	if f.OpenAIAPIKey != "" {
		out["OPENAI_API_KEY"] = f.OpenAIAPIKey
	} else {
		out["OPENAI_API_KEY"] = nil // Codex always writes the member
	}
	if f.Tokens != nil {
		out["tokens"] = f.Tokens
	}
	if f.LastRefresh != nil {
		out["last_refresh"] = f.LastRefresh.UTC().Format(time.RFC3339Nano)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Write replaces home's auth.json with f atomically, mode 0600.
func Write(home string, f *File) error {
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(home, ".auth.json.tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, Path(home)); err != nil {
		return err
	}
	ok = true
	return nil
}

// Remove deletes home's auth.json; it reports whether there was one.
func Remove(home string) (bool, error) {
	err := os.Remove(Path(home))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// SaveAPIKey writes an auth.json holding key alone, as
// `codex login --with-api-key` does.
func SaveAPIKey(home, key string) error {
	return Write(home, &File{AuthMode: ModeAPIKey, OpenAIAPIKey: key})
}
