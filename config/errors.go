package config

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/BurntSushi/toml"
	"github.com/codexd/codexd/internal/lazyre"
)

// Error is a config value that cannot be used: a TOML syntax error, a known
// key of the wrong type or with an unknown value, or a setting that names
// something that does not exist (a profile, a provider).
type Error struct {
	// File is the config file's path, or "-c KEY=VALUE" for an override.
	File string
	// Line is 1-based; 0 when unknown (overrides, cross-key checks).
	Line int
	// Key is the dotted key, when known ("model_providers.mock.base_url").
	Key string
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": " + e.Msg
}

// typeErrRE matches BurntSushi's decode errors, which carry the line and
// the key only in their text.
var typeErrRE = lazyre.Regexp{Expr: `^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`}

// asError turns an error of toml.Decode into an *Error naming file, line
// and key.
func asError(file string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
	}
	if m := typeErrRE.Get().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Key: m[2], Msg: m[3]}
	}
	return &Error{File: file, Msg: err.Error()}
}

func errorf(file, key, format string, args ...any) *Error {
	return &Error{File: file, Key: key, Msg: fmt.Sprintf(format, args...)}
}
