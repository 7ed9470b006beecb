package imageinput

import (
	"image/color"
	"testing"
)

// BenchmarkPrepareScreenshot scales a 3840×2160 PNG to high detail
// (2048×1152 fits 2048 px but not 2,500 patches: 1,600×900).
func BenchmarkPrepareScreenshot(b *testing.B) {
	data := encode(b, picture(3840, 2160, color.RGBA{30, 60, 90, 255}), "png")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Prepare(data, High); err != nil {
			b.Fatal(err)
		}
	}
}
