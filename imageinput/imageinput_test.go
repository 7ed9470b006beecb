package imageinput

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/codexd/codexd/imageinput/imagetest"
)

// TestTargetSize holds the sizes Codex 0.169 sent, side by side, for
// images of these sizes (gpt-5.5 prepares at original detail, a model
// without metadata at high).
func TestTargetSize(t *testing.T) {
	cases := []struct {
		w, h   int
		lim    Limits
		tw, th int
	}{
		{4, 3, Original, 4, 3},
		{3000, 1000, Original, 3000, 1000},
		{7000, 1000, Original, 6000, 857},
		{4000, 4000, Original, 3200, 3200},
		{10, 10, High, 10, 10},
		{3000, 1000, High, 2048, 683},
		{7000, 1000, High, 2048, 293},
		{4000, 4000, High, 1600, 1600},
		{1, 60000, High, 1, 2048},
	}
	for _, c := range cases {
		tw, th := TargetSize(c.w, c.h, c.lim)
		if tw != c.tw || th != c.th {
			t.Errorf("TargetSize(%d, %d, %v) = %d×%d, want %d×%d", c.w, c.h, c.lim, tw, th, c.tw, c.th)
		}
		if !fits(tw, th, c.lim) {
			t.Errorf("%d×%d does not fit %v", tw, th, c.lim)
		}
	}
}

func picture(w, h int, c color.Color) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	return img
}

func encode(t testing.TB, img image.Image, format string) []byte {
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPrepareKeepsAnImageThatFits(t *testing.T) {
	for _, f := range []string{"png", "jpeg"} {
		data := encode(t, picture(64, 32, color.RGBA{10, 20, 30, 255}), f)
		p, err := Prepare(data, High)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.Bytes, data) || p.MIME != "image/"+f || p.Width != 64 || p.Height != 32 {
			t.Errorf("%s: got %s %d×%d, %d bytes; want the original bytes", f, p.MIME, p.Width, p.Height, len(p.Bytes))
		}
	}
}

func TestPrepareReencodesGIFAsPNG(t *testing.T) {
	data := encode(t, picture(10, 10, color.RGBA{200, 0, 0, 255}), "gif")
	p, err := Prepare(data, Original)
	if err != nil {
		t.Fatal(err)
	}
	if p.MIME != "image/png" {
		t.Fatalf("MIME %s, want image/png", p.MIME)
	}
	img, err := png.Decode(bytes.NewReader(p.Bytes))
	if err != nil || img.Bounds().Dx() != 10 {
		t.Fatalf("not a 10×10 PNG: %v", err)
	}
}

func TestPrepareScalesDown(t *testing.T) {
	want := color.RGBA{200, 100, 50, 255}
	// Small limits, so that the race detector's tests stay quick: the
	// sizes of Codex's limits are TestTargetSize's.
	lim := Limits{MaxDimension: 100, MaxPatches: 10}
	for _, f := range []string{"png", "jpeg"} {
		data := encode(t, picture(300, 100, want), f)
		p, err := Prepare(data, lim)
		if err != nil {
			t.Fatal(err)
		}
		if p.MIME != "image/"+f || p.Width != 100 || p.Height != 33 || p.SourceWidth != 300 {
			t.Fatalf("%s: got %s %d×%d from %d×%d", f, p.MIME, p.Width, p.Height, p.SourceWidth, p.SourceHeight)
		}
		img, _, err := image.Decode(bytes.NewReader(p.Bytes))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 100 || b.Dy() != 33 {
			t.Fatalf("%s: encoded %v", f, b)
		}
		// A uniform picture stays uniform, edges included.
		for _, pt := range []image.Point{{0, 0}, {99, 32}, {50, 16}} {
			r, g, b, _ := img.At(pt.X, pt.Y).RGBA()
			if d := absDiff(r>>8, 200) + absDiff(g>>8, 100) + absDiff(b>>8, 50); d > 12 {
				t.Errorf("%s: pixel %v is %d,%d,%d", f, pt, r>>8, g>>8, b>>8)
			}
		}
	}
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestPrepareKeepsTransparency(t *testing.T) {
	data := encode(t, picture(400, 10, color.NRGBA{255, 0, 0, 0}), "png")
	p, err := Prepare(data, Limits{MaxDimension: 100, MaxPatches: 100})
	if err != nil {
		t.Fatal(err)
	}
	img, _ := png.Decode(bytes.NewReader(p.Bytes))
	if _, _, _, a := img.At(50, 1).RGBA(); a != 0 {
		t.Errorf("alpha %d, want 0", a)
	}
}

func TestPrepareRefusesWhatIsNotAnImage(t *testing.T) {
	if _, err := Prepare([]byte("not an image"), High); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v, want ErrUnsupported", err)
	}
	trunc := encode(t, picture(64, 64, color.White), "png")
	if _, err := Prepare(trunc[:len(trunc)/2], High); err == nil {
		t.Error("a truncated PNG was prepared")
	}
}

func TestPrepareRefusesAHugeImageBeforeDecoding(t *testing.T) {
	for _, d := range [][2]uint32{{60000, 60000}, {100000, 1}} {
		if _, err := Prepare(imagetest.PNGHeader(d[0], d[1]), High); !errors.Is(err, ErrTooManyPixels) || errors.Is(err, ErrTooLarge) {
			t.Errorf("%v: got %v, want ErrTooManyPixels", d, err)
		}
	}
	var stats testingMem
	stats.start()
	_, _ = Prepare(imagetest.PNGHeader(60000, 60000), High)
	if n := stats.allocated(); n > 1<<20 {
		t.Errorf("refusing a 60000×60000 header allocated %d bytes", n)
	}
	if _, err := Prepare(make([]byte, MaxInputBytes+1), High); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an oversized input: got %v, want ErrTooLarge", err)
	}
}

func TestParseDataURL(t *testing.T) {
	png := encode(t, picture(2, 2, color.Black), "png")
	good := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	if b, err := ParseDataURL(good); err != nil || !bytes.Equal(b, png) {
		t.Errorf("ParseDataURL(good) = %v", err)
	}
	if b, err := ParseDataURL("DATA:whatever;BASE64," + base64.StdEncoding.EncodeToString(png)); err != nil || !bytes.Equal(b, png) {
		t.Errorf("case-insensitive prefix: %v", err)
	}
	for _, bad := range []string{"https://example.com/a.png", "data:image/png,plain", "data:image/png;base64", "data:image/png;base64,%%%", "data:"} {
		if _, err := ParseDataURL(bad); !errors.Is(err, ErrDataURL) {
			t.Errorf("ParseDataURL(%q) = %v, want ErrDataURL", bad, err)
		}
	}
	huge := "data:image/png;base64," + strings.Repeat("A", MaxInputBytes/3*4+8)
	if _, err := ParseDataURL(huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an oversized data URL: %v", err)
	}
	p, _ := Prepare(png, High)
	if p.DataURL() != good {
		t.Errorf("DataURL() = %.40s", p.DataURL())
	}
}
