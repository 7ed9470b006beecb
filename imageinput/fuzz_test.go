package imageinput

import (
	"bytes"
	"image"
	"testing"

	"github.com/codexd/codexd/imageinput/imagetest"
)

// FuzzPrepare: whatever the bytes, Prepare answers an image that fits the
// limits and decodes to the size it reports, or an error; it never panics
// nor allocates for a header's claims (MaxDecodedBytes). Seeds in
// testdata/fuzz/FuzzPrepare: small PNG, JPEG, GIF, WebP files, a truncated
// one and a header claiming a huge image.
func FuzzPrepare(f *testing.F) {
	f.Add(imagetest.PNGHeader(60000, 60000))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A header may claim up to MaxDecodedBytes of pixels, and Prepare
		// decodes those (TestPrepareRefusesAHugeImageBeforeDecoding holds
		// the bound); the fuzzer looks at smaller ones, to stay fast.
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && cfg.Width*cfg.Height > 1<<20 {
			t.Skip()
		}
		for _, lim := range []Limits{{MaxDimension: 16, MaxPatches: 1}, High} {
			p, err := Prepare(data, lim)
			if err != nil {
				continue
			}
			if !fits(p.Width, p.Height, lim) {
				t.Fatalf("prepared %d×%d past %v", p.Width, p.Height, lim)
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Bytes))
			if err != nil {
				t.Fatalf("the prepared bytes do not decode: %v", err)
			}
			if cfg.Width != p.Width || cfg.Height != p.Height {
				t.Fatalf("reported %d×%d, encoded %d×%d", p.Width, p.Height, cfg.Width, cfg.Height)
			}
		}
	})
}
