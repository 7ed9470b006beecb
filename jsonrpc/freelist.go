package jsonrpc

import (
	"bytes"
	"io"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// freeList keeps a few values for reuse. Unlike a sync.Pool it survives
// garbage collections and is shared by every processor: large messages
// cause frequent collections, and a client and a server on different
// processors would then miss a pool on most gets and refill it with fresh
// allocations. It holds at most freeListSize values.
type freeList[T any] struct {
	mu    sync.Mutex
	max   int // at most freeListSize; 0 means freeListSize
	n     int
	items [freeListSize]*T
}

const freeListSize = 8

func (f *freeList[T]) get() *T {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return new(T)
	}
	f.n--
	v := f.items[f.n]
	f.items[f.n] = nil
	f.mu.Unlock()
	return v
}

func (f *freeList[T]) put(v *T) {
	f.mu.Lock()
	if f.n < freeListSize && (f.max == 0 || f.n < f.max) {
		f.items[f.n] = v
		f.n++
	}
	f.mu.Unlock()
}

// valueDecoder decodes one params or result value into a Go value with a
// jsontext.Decoder that is kept, with the name tables it has grown, between
// uses.
type valueDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var valueDecoders freeList[valueDecoder]

// unmarshal is json.Unmarshal of raw with a reused decoder.
func unmarshal(raw []byte, v any) error {
	d := valueDecoders.get()
	// Decoding from a bytes.Buffer lets jsontext parse raw in place.
	d.buf = *bytes.NewBuffer(raw)
	d.dec.Reset(&d.buf)
	err := json.UnmarshalDecode(&d.dec, v)
	trailing := false
	if err == nil {
		// UnmarshalDecode reads one value; Unmarshal also wants nothing
		// after it. (Raw params and results from the message decoder are
		// one value already, but DecodeParams is exported.)
		_, terr := d.dec.ReadToken()
		trailing = terr != io.EOF
	}
	d.buf = bytes.Buffer{}
	d.dec.Reset(&d.buf)
	valueDecoders.put(d)
	if trailing {
		// json.Unmarshal says what follows, in its own words.
		return json.Unmarshal(raw, v)
	}
	return err
}
