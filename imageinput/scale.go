package imageinput

import (
	"image"
	"image/draw"
	"math"
)

// scale shrinks src to w×h with a triangle (linear) filter whose support
// widens with the ratio, as the image crate's Triangle filter does for
// Codex. It streams: each source row is fetched, resampled across, and
// added into the few output rows it contributes to, so the memory it needs
// beyond src and the result is a few rows, whatever src's size. It only
// shrinks (TargetSize never grows an image).
func scale(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	cols := weights(w, sw)
	rows := weights(h, sh)

	row := image.NewRGBA(image.Rect(0, 0, sw, 1))
	hrow := make([]float32, w*4)
	acc := map[int][]float32{}
	next := 0 // the first output row not yet finished
	for j := 0; j < sh && next < h; j++ {
		// Fetch source row j as premultiplied RGBA (image/draw has fast
		// paths for the decoders' pixel types).
		draw.Draw(row, row.Rect, src, image.Pt(b.Min.X, b.Min.Y+j), draw.Src)
		for x, c := range cols {
			var r, g, bl, a float32
			for k, wt := range c.w {
				p := row.Pix[(c.start+k)*4:]
				r += wt * float32(p[0])
				g += wt * float32(p[1])
				bl += wt * float32(p[2])
				a += wt * float32(p[3])
			}
			hrow[x*4], hrow[x*4+1], hrow[x*4+2], hrow[x*4+3] = r, g, bl, a
		}
		// The output rows whose window holds j: from next on, until one
		// starts past j.
		for y := next; y < h && rows[y].start <= j; y++ {
			c := rows[y]
			k := j - c.start
			if k >= len(c.w) {
				continue
			}
			a := acc[y]
			if a == nil {
				a = make([]float32, w*4)
				acc[y] = a
			}
			wt := c.w[k]
			for i, v := range hrow {
				a[i] += wt * v
			}
			if k == len(c.w)-1 {
				put(dst, y, a)
				delete(acc, y)
			}
		}
		for next < h && rows[next].start+len(rows[next].w) <= j+1 {
			next++
		}
	}
	return dst
}

func put(dst *image.RGBA, y int, a []float32) {
	px := dst.Pix[y*dst.Stride : y*dst.Stride+len(a)]
	for i, v := range a {
		px[i] = uint8(math.Round(float64(min(max(v, 0), 255))))
	}
	// Premultiplied: no colour channel may exceed alpha.
	for i := 0; i+3 < len(px); i += 4 {
		al := px[i+3]
		px[i], px[i+1], px[i+2] = min(px[i], al), min(px[i+1], al), min(px[i+2], al)
	}
}

// contrib is one output sample's source window and its normalised weights.
type contrib struct {
	start int
	w     []float32
}

// weights are the triangle filter's contributions of src samples to each
// of dst samples (dst <= src).
func weights(dst, src int) []contrib {
	ratio := float64(src) / float64(dst)
	support := math.Max(ratio, 1)
	out := make([]contrib, dst)
	for i := range out {
		center := (float64(i) + 0.5) * ratio
		left := max(int(math.Floor(center-support)), 0)
		right := min(int(math.Ceil(center+support)), src)
		ws := make([]float32, 0, right-left)
		var sum float64
		for j := left; j < right; j++ {
			v := 1 - math.Abs((float64(j)+0.5-center)/support)
			if v < 0 {
				v = 0
			}
			ws = append(ws, float32(v))
			sum += v
		}
		if sum == 0 {
			// Cannot happen with a window around center; keep the nearest
			// sample rather than divide by zero.
			left, ws, sum = min(int(center), src-1), []float32{1}, 1
		}
		for k := range ws {
			ws[k] = float32(float64(ws[k]) / sum)
		}
		out[i] = contrib{start: left, w: ws}
	}
	return out
}
