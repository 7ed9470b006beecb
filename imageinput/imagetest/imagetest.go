// Package imagetest builds image files for tests of the code that reads
// images a user or a model points at: the imageinput package itself, the
// core's image inputs and view_image, and the differential tests.
//
// It is for tests only and must never be imported by production code: it
// builds inputs that are hostile on purpose.
package imagetest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

// PNGHeader is the start of a PNG file that claims w×h 8-bit RGBA pixels
// and holds none: a valid signature and IHDR chunk, then nothing. Decoding
// it would allocate w*h*4 bytes, which is what a decoding budget must
// refuse before it tries.
func PNGHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // bit depth 8, colour type RGBA
	chunk := append([]byte("IHDR"), ihdr...)
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	b.Write(chunk)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}
