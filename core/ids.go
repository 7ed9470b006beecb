package core

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

var uuidMu sync.Mutex
var uuidLast int64

// newUUIDv7 returns a time-ordered UUID (RFC 9562 version 7), as Codex's
// thread and turn ids are. Ids from one process are strictly increasing.
func newUUIDv7() string {
	uuidMu.Lock()
	ms := time.Now().UnixMilli()
	if ms <= uuidLast {
		ms = uuidLast + 1 // keep order within a millisecond
	}
	uuidLast = ms
	uuidMu.Unlock()
	var b [16]byte
	_, _ = rand.Read(b[6:])
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(b[:6], ts[2:])
	b[6] = 0x70 | (b[6] & 0x0f)
	b[8] = 0x80 | (b[8] & 0x3f)
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
