package appserver

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// wantView is what a deltaBuf given everything in full must show.
func wantView(full string) string {
	const half = maxViewBytes / 2
	if len(full) <= maxViewBytes {
		return validUTF8(full)
	}
	dropped := len(full) - 2*half
	return validUTF8(full[:half] + "\n…" + strconv.Itoa(dropped) + " bytes dropped…\n" + full[len(full)-half:])
}

// A deltaBuf shows everything up to maxViewBytes, then the first half and
// the latest half, whatever the sizes of the writes.
func TestDeltaBufKeepsBothEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 10, maxViewBytes, maxViewBytes + 1, 3*maxViewBytes + 17} {
		for _, maxWrite := range []int{1, 5, 4096, maxViewBytes} {
			if total/maxWrite > 1<<20 {
				continue
			}
			var b deltaBuf
			var full strings.Builder
			for full.Len() < total {
				n := min(1+rng.IntN(maxWrite), total-full.Len())
				s := strings.Repeat(string(rune('a'+full.Len()%26)), n)
				b.write(s)
				full.WriteString(s)
			}
			if got, want := b.String(), wantView(full.String()); got != want {
				t.Fatalf("total %d, writes ≤ %d: shows %d bytes, want %d", total, maxWrite, len(got), len(want))
			}
			if k := cap(b.head) + cap(b.tail); k > 2*maxViewBytes {
				t.Fatalf("total %d, writes ≤ %d: keeps %d bytes", total, maxWrite, k)
			}
		}
	}
}

// partsBuf keeps at most maxViewBytes over all parts, and ignores an index
// outside [0, maxViewParts).
func TestPartsBufBounded(t *testing.T) {
	var p partsBuf
	p.write(-1, "x")
	p.write(maxViewParts, "x")
	p.write(1<<40, "x")
	if p.parts != nil {
		t.Fatalf("out-of-range parts made: %d", len(p.parts))
	}
	p.write(0, "a")
	p.write(2, "c")
	p.write(0, "b") // part 0 was moved when the slice grew
	if got := strings.Join(p.strings(), "|"); got != "ab||c" {
		t.Fatalf("parts %q", got)
	}
	big := strings.Repeat("z", 1<<16)
	for i := range 64 {
		p.write(i%3, big)
	}
	n := 0
	for _, s := range p.strings() {
		n += len(s)
	}
	if n != maxViewBytes {
		t.Fatalf("kept %d bytes, want %d", n, maxViewBytes)
	}
}

// Accumulating deltas allocates a number of times logarithmic in their
// count, not one per delta: 80,000 deltas of 5 bytes (400 KB) into each
// buffer of a view. With string += it was one allocation per delta, and
// quadratic bytes.
func TestViewAccumulationAllocations(t *testing.T) {
	allocs := testing.AllocsPerRun(3, func() {
		var v itemView
		for range 80_000 {
			v.text.write("abcde")
			v.output.write("abcde")
			v.summary.write(0, "abcde")
			v.content.write(1, "abcde")
		}
	})
	if allocs > 200 {
		t.Fatalf("%.0f allocations for 4 × 80,000 deltas", allocs)
	}
}
