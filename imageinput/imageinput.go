// Package imageinput prepares an image for a model prompt as Codex 0.169
// does: it recognises PNG, JPEG, GIF and WebP, scales an image down to fit
// a detail level's limits (a largest side and a budget of 32×32 patches),
// keeps the original bytes when nothing needs to change and the format can
// be sent as it is, and re-encodes otherwise (JPEG stays JPEG, the rest
// becomes PNG).
//
// Its input is untrusted (any file a user names, any data URL a client
// sends), so it reads an image's dimensions from its header and refuses
// one whose pixels would not fit the decoding budget before decoding it,
// and it never holds more than a few rows of intermediate pixels while
// scaling.
//
// It must never read files or know where the bytes came from: callers read
// them (through the thread's environment) and decide what an error shows
// the model.
package imageinput

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers the GIF decoder
	"image/jpeg"
	"image/png"
	"math"
	"strings"

	_ "golang.org/x/image/webp" // registers the WebP decoder
)

// Limits bound a prepared image: neither side past MaxDimension, and at
// most MaxPatches patches of PatchSize×PatchSize pixels.
type Limits struct {
	MaxDimension int
	MaxPatches   int
}

// PatchSize is the side of the square patches the model's image budget is
// counted in.
const PatchSize = 32

// The limits of Codex 0.169's two detail levels.
var (
	High     = Limits{MaxDimension: 2048, MaxPatches: 2500}
	Original = Limits{MaxDimension: 6000, MaxPatches: 10000}
)

// MaxInputBytes bounds an image's encoded bytes. Codex allows 1 GiB; an
// exec-server message is at most 128 MiB of base64, so a larger file could
// not be read through the environment anyway.
const MaxInputBytes = 64 << 20

// MaxDecodedBytes bounds the memory a decoded image may take (4 bytes a
// pixel), as the image crate Codex uses bounds its allocations.
const MaxDecodedBytes = 512 << 20

// MaxSide bounds either side of an image (JPEG's own limit; the scaler
// keeps a row of the source).
const MaxSide = 65535

// Errors. ErrTooLarge (bytes past MaxInputBytes) is its own kind because
// the model is told a different thing for it, as Codex tells it. An image
// whose pixels are past the decoding budget (ErrTooManyPixels) is, for
// the model, one that could not be processed, as Codex reports an image
// its decoder refuses.
var (
	ErrTooLarge      = errors.New("the image is too large")
	ErrTooManyPixels = errors.New("the image has more pixels than can be decoded")
	ErrUnsupported   = errors.New("not a PNG, JPEG, GIF or WebP image")
	ErrDataURL       = errors.New("not a base64 data URL")
)

// Prepared is an image ready for the prompt.
type Prepared struct {
	Bytes                     []byte
	MIME                      string
	SourceWidth, SourceHeight int
	Width, Height             int
}

// DataURL is the image as a data URL.
func (p Prepared) DataURL() string {
	return "data:" + p.MIME + ";base64," + base64.StdEncoding.EncodeToString(p.Bytes)
}

// Prepare makes data fit lim.
func Prepare(data []byte, lim Limits) (Prepared, error) {
	if len(data) > MaxInputBytes {
		return Prepared{}, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(data), MaxInputBytes)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		if errors.Is(err, image.ErrFormat) {
			return Prepared{}, ErrUnsupported
		}
		return Prepared{}, fmt.Errorf("decoding the image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Prepared{}, fmt.Errorf("decoding the image: %dx%d pixels", cfg.Width, cfg.Height)
	}
	if cfg.Width > MaxSide || cfg.Height > MaxSide || int64(cfg.Width)*int64(cfg.Height)*4 > MaxDecodedBytes {
		return Prepared{}, fmt.Errorf("%w: %dx%d pixels", ErrTooManyPixels, cfg.Width, cfg.Height)
	}
	// Decode even when the bytes go out as they are: a file that does not
	// decode is not sent.
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return Prepared{}, fmt.Errorf("decoding the image: %w", err)
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := TargetSize(w, h, lim)
	p := Prepared{SourceWidth: w, SourceHeight: h, Width: tw, Height: th}
	keep := format == "png" || format == "jpeg" || format == "webp"
	if tw == w && th == h && keep {
		p.Bytes, p.MIME = data, "image/"+format
		return p, nil
	}
	out := img
	if tw != w || th != h {
		out = scale(img, tw, th)
	}
	var buf bytes.Buffer
	if format == "jpeg" {
		err = jpeg.Encode(&buf, out, &jpeg.Options{Quality: 85})
		p.MIME = "image/jpeg"
	} else {
		// WebP too: Go has no WebP encoder, so a scaled WebP image goes out
		// as PNG (Codex re-encodes it as lossless WebP).
		err = png.Encode(&buf, out)
		p.MIME = "image/png"
	}
	if err != nil {
		return Prepared{}, fmt.Errorf("encoding the image: %w", err)
	}
	p.Bytes = buf.Bytes()
	return p, nil
}

// ParseDataURL returns the bytes of a base64 data URL; the media type it
// names is not trusted (Prepare looks at the bytes).
func ParseDataURL(url string) ([]byte, error) {
	if len(url) < 5 || !strings.EqualFold(url[:5], "data:") {
		return nil, ErrDataURL
	}
	meta, enc, ok := strings.Cut(url[5:], ",")
	if !ok {
		return nil, fmt.Errorf("%w: no comma", ErrDataURL)
	}
	isB64 := false
	for _, part := range strings.Split(meta, ";") {
		if strings.EqualFold(part, "base64") {
			isB64 = true
		}
	}
	if !isB64 {
		return nil, fmt.Errorf("%w: only base64 data URLs are supported", ErrDataURL)
	}
	if base64.StdEncoding.DecodedLen(len(enc)) > MaxInputBytes {
		return nil, fmt.Errorf("%w: %d bytes of base64", ErrTooLarge, len(enc))
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataURL, err)
	}
	return b, nil
}

// TargetSize is the size an image of w×h pixels is scaled to under lim:
// itself when it fits; else scaled so its larger side is MaxDimension;
// else, if that is still past the patch budget, shrunk by area and rounded
// down to a whole number of patches each way, as the Responses API counts
// them.
func TargetSize(w, h int, lim Limits) (int, int) {
	w, h = max(w, 1), max(h, 1)
	if fits(w, h, lim) {
		return w, h
	}
	s := math.Min(float64(lim.MaxDimension)/float64(max(w, h)), 1)
	w = max(int(math.Round(float64(w)*s)), 1)
	h = max(int(math.Round(float64(h)*s)), 1)
	if fits(w, h, lim) {
		return w, h
	}
	fw, fh, p := float64(w), float64(h), float64(PatchSize)
	s = math.Sqrt(p * p * float64(lim.MaxPatches) / fw / fh)
	pw, ph := fw*s/p, fh*s/p
	s *= math.Min(math.Floor(pw)/pw, math.Floor(ph)/ph)
	return max(int(math.Floor(fw*s)), 1), max(int(math.Floor(fh*s)), 1)
}

func fits(w, h int, lim Limits) bool {
	pw := (w + PatchSize - 1) / PatchSize
	ph := (h + PatchSize - 1) / PatchSize
	return w <= lim.MaxDimension && h <= lim.MaxDimension && int64(pw)*int64(ph) <= int64(lim.MaxPatches)
}
