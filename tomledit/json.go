package tomledit

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// FromJSON turns a JSON value into a value Set takes, keeping the order
// of object members; a JSON null is nil (the caller's "remove"). A null
// inside an array or object has no TOML form and is an error, as a
// number that is neither an int64 nor a float64.
func FromJSON(raw []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := fromJSON(dec, true)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err == nil {
		return nil, errors.New("trailing data after the value")
	}
	return v, nil
}

func fromJSON(dec *jsontext.Decoder, top bool) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		if top {
			return nil, nil
		}
		return nil, errors.New("unsupported unit type")
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		s := tok.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
			if _, err := strconv.ParseUint(s, 10, 64); err == nil {
				return nil, fmt.Errorf("u64 value was too large")
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %s", s)
		}
		return f, nil
	case '[':
		out := []any{}
		for dec.PeekKind() != ']' {
			v, err := fromJSON(dec, false)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		_, err := dec.ReadToken()
		return out, err
	case '{':
		m := &Map{}
		for dec.PeekKind() != '}' {
			kt, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := kt.String()
			v, err := fromJSON(dec, false)
			if err != nil {
				return nil, err
			}
			m.Set(key, v)
		}
		_, err := dec.ReadToken()
		return m, err
	}
	return nil, fmt.Errorf("unexpected JSON %v", tok.Kind())
}
