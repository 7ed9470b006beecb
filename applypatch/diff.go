package applypatch

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns the unified diff of two texts, line by line, as hunks
// with context lines of context and no file headers, in the format of the
// `similar` crate Codex uses: "@@ -3 +3,2 @@" (a one-line range has no
// count, an empty one starts at the line before), and "\ No newline at end
// of file" after a last line without one. Identical texts give "".
func UnifiedDiff(old, new string, context int) string {
	a, b := splitKeepEnds(old), splitKeepEnds(new)
	ops := diffLines(a, b)
	var out strings.Builder
	for _, g := range groupOps(ops, context) {
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(first.i1, last.i2), hunkRange(first.j1, last.j2))
		for _, o := range g {
			switch o.tag {
			case opEqual:
				writeDiffLines(&out, ' ', a[o.i1:o.i2])
			case opDelete:
				writeDiffLines(&out, '-', a[o.i1:o.i2])
			case opInsert:
				writeDiffLines(&out, '+', b[o.j1:o.j2])
			case opReplace:
				writeDiffLines(&out, '-', a[o.i1:o.i2])
				writeDiffLines(&out, '+', b[o.j1:o.j2])
			}
		}
	}
	return out.String()
}

func writeDiffLines(out *strings.Builder, mark byte, lines []string) {
	for _, l := range lines {
		out.WriteByte(mark)
		out.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, end int) string {
	begin, n := start+1, end-start
	if n == 1 {
		return fmt.Sprint(begin)
	}
	if n == 0 {
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, n)
}

// splitKeepEnds splits text into lines that keep their "\n".
func splitKeepEnds(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type opTag uint8

const (
	opEqual opTag = iota
	opDelete
	opInsert
	opReplace
)

// diffOp says a[i1:i2] and b[j1:j2] are equal, deleted, inserted or
// replaced.
type diffOp struct {
	tag            opTag
	i1, i2, j1, j2 int
}

// maxDiffCells bounds the Myers trace (about the square of the edit
// distance; 4M cells is 32 MiB at an edit distance of 2,000 lines). Past it
// the differing middle is reported as one replacement: a correct diff, if
// not a minimal one, in bounded memory.
const maxDiffCells = 4 << 20

// diffLines computes the opcodes turning a into b: common prefix and suffix
// first, then Myers' O(ND) algorithm on the middle.
func diffLines(a, b []string) []diffOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var edits []diffOp // equal/delete/insert runs of the middle, offset by pre
	if mid := myers(a[pre:len(a)-suf], b[pre:len(b)-suf]); mid != nil {
		edits = mid
	} else {
		edits = []diffOp{{opDelete, 0, len(a) - pre - suf, 0, 0}, {opInsert, len(a) - pre - suf, len(a) - pre - suf, 0, len(b) - pre - suf}}
	}
	var ops []diffOp
	push := func(o diffOp) {
		if o.i1 == o.i2 && o.j1 == o.j2 {
			return
		}
		if n := len(ops); n > 0 {
			p := &ops[n-1]
			switch {
			case p.tag == o.tag:
				p.i2, p.j2 = o.i2, o.j2
				return
			case p.tag != opEqual && o.tag != opEqual:
				p.tag, p.i2, p.j2 = opReplace, o.i2, o.j2
				return
			}
		}
		ops = append(ops, o)
	}
	push(diffOp{opEqual, 0, pre, 0, pre})
	for _, e := range edits {
		push(diffOp{e.tag, e.i1 + pre, e.i2 + pre, e.j1 + pre, e.j2 + pre})
	}
	push(diffOp{opEqual, len(a) - suf, len(a), len(b) - suf, len(b)})
	return ops
}

// myers returns single-line equal/delete/insert steps from a to b, or nil
// when the trace would exceed maxDiffCells.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return []diffOp{}
	}
	max := n + m
	offset := max
	v := make([]int, 2*max+2)
	// trace[d] keeps v[-d..d] as it was before step d: all that
	// backtracking through step d reads.
	var trace [][]int
	cells := 0
	found := false
	for d := 0; d <= max && !found; d++ {
		if cells += 2*d + 1; cells > maxDiffCells {
			return nil
		}
		trace = append(trace, append([]int(nil), v[offset-d:offset+d+1]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	// Backtrack from (n, m) through the saved vectors.
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d] // vd[i] is v[i-d]
		k := x - y
		var prevK int
		if k == -d || (k != d && vd[k-1+d] < vd[k+1+d]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := 0
		if d > 0 {
			prevX = vd[prevK+d]
		}
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, diffOp{opEqual, x, x + 1, y, y + 1})
		}
		if d == 0 {
			break
		}
		if x == prevX {
			rev = append(rev, diffOp{opInsert, x, x, prevY, y})
		} else {
			rev = append(rev, diffOp{opDelete, prevX, x, y, y})
		}
		x, y = prevX, prevY
	}
	out := make([]diffOp, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}

// groupOps groups opcodes into hunks with n lines of context, as difflib's
// get_grouped_opcodes (which similar follows).
func groupOps(ops []diffOp, n int) [][]diffOp {
	if len(ops) == 0 || (len(ops) == 1 && ops[0].tag == opEqual) {
		return nil
	}
	ops = append([]diffOp(nil), ops...)
	if o := &ops[0]; o.tag == opEqual {
		o.i1, o.j1 = max(o.i1, o.i2-n), max(o.j1, o.j2-n)
	}
	if o := &ops[len(ops)-1]; o.tag == opEqual {
		o.i2, o.j2 = min(o.i2, o.i1+n), min(o.j2, o.j1+n)
	}
	var groups [][]diffOp
	var g []diffOp
	for _, o := range ops {
		if o.tag == opEqual && o.i2-o.i1 > 2*n {
			g = append(g, diffOp{opEqual, o.i1, min(o.i2, o.i1+n), o.j1, min(o.j2, o.j1+n)})
			groups = append(groups, g)
			g = nil
			o.i1, o.j1 = max(o.i1, o.i2-n), max(o.j1, o.j2-n)
		}
		g = append(g, o)
	}
	if len(g) > 0 && !(len(g) == 1 && g[0].tag == opEqual) {
		groups = append(groups, g)
	}
	// Drop empty equal runs left at the edges (context 0).
	for gi, g := range groups {
		var kept []diffOp
		for _, o := range g {
			if o.tag == opEqual && o.i1 == o.i2 {
				continue
			}
			kept = append(kept, o)
		}
		groups[gi] = kept
	}
	return groups
}
