package filesearch

import "strings"

// The fast path. Nearly every path in a real tree is ASCII, and a
// keystroke scores every path of the tree, so for those the work per path
// is cut down without changing any score:
//   - the walk keeps each path folded, and the set of characters it holds,
//     so most paths are turned away by one AND and the rest are tested as
//     a subsequence with strings.IndexByte;
//   - a match that could not beat the worst of the best Limit, even with
//     the highest score its query allows, is never aligned;
//   - the alignment runs only between the first possible start and the last
//     possible end, which is where every alignment lies;
//   - the matched indices are worked out only for the answer (see full).
// FuzzFastPath holds it to the reference scorer.

// newEntry is a walk's entry with what the fast path needs.
func newEntry(root int, path string, isDir bool) entry {
	e := entry{root: root, path: path, isDir: isDir, nameAt: int32(strings.LastIndexByte(path, '/') + 1), mask: ^uint64(0)}
	upper := false
	for k := 0; k < len(path); k++ {
		b := path[k]
		if b >= 0x80 {
			e.lower = ""
			return e
		}
		upper = upper || b >= 'A' && b <= 'Z'
	}
	e.ascii, e.lower = true, path
	if upper {
		e.lower = strings.ToLower(path)
	}
	e.mask = 0
	for k := 0; k < len(e.lower); k++ {
		e.mask |= charBit(rune(e.lower[k]))
	}
	return e
}

// childEntry is newEntry(root, parent's path + "/" + name, isDir) (just
// name for the zero parent, the root), made
// from what parent already knows, with one allocation for the path and
// its folded form: a walk makes one for every file of the tree.
func childEntry(root int, parent entry, name string, isDir bool) entry {
	if parent.path == "" {
		return newEntry(root, name, isDir)
	}
	if !parent.ascii {
		return newEntry(root, parent.path+"/"+name, isDir)
	}
	mask, upper := parent.mask|charBit('/'), parent.lower != parent.path
	for k := 0; k < len(name); k++ {
		b := name[k]
		if b >= 0x80 {
			return newEntry(root, parent.path+"/"+name, isDir)
		}
		upper = upper || b >= 'A' && b <= 'Z'
		mask |= charBit(rune(asciiFold[b]))
	}
	n := len(parent.path) + 1 + len(name)
	var b strings.Builder
	if upper {
		b.Grow(2 * n)
	} else {
		b.Grow(n)
	}
	b.WriteString(parent.path)
	b.WriteByte('/')
	b.WriteString(name)
	if upper {
		b.WriteString(parent.lower)
		b.WriteByte('/')
		for k := 0; k < len(name); k++ {
			b.WriteByte(asciiFold[name[k]])
		}
	}
	s := b.String()
	e := entry{root: root, path: s[:n], isDir: isDir, ascii: true, lower: s[:n], nameAt: int32(len(parent.path) + 1), mask: mask}
	if upper {
		e.lower = s[n:]
	}
	return e
}

// charBit is a folded character's bit in a character-set mask. ASCII
// characters share 63 bits; bit 63 stands for every other character,
// which no ASCII path holds.
func charBit(r rune) uint64 {
	switch {
	case r >= 0x80:
		return 1 << 63
	case r >= 'a' && r <= 'z':
		return 1 << (r - 'a')
	case r >= '0' && r <= '9':
		return 1 << (26 + r - '0')
	}
	return 1 << (36 + r%27)
}

// prepareFast fills the pattern's fast-path fields.
func (p *pattern) prepareFast() {
	p.ascii = true
	for _, a := range p.atoms {
		for _, r := range a {
			p.mask |= charBit(r)
			p.ascii = p.ascii && r < 0x80
		}
		if len(a) > 0 {
			// The most an atom can score: its first character at the best
			// bonus, doubled, and each next one matched at the best bonus
			// (a consecutive run carries at most that bonus on).
			p.bound += scoreMatch + bonusBoundaryDelim*firstCharMult + (len(a)-1)*(scoreMatch+bonusBoundaryDelim)
		}
	}
	p.bound = min(p.bound, 0xffff)
}

// bonusASCII is bonusFor by table, for a class pair of ASCII characters.
var bonusASCII = func() (t [classNumber + 1][classNumber + 1]int8) {
	for a := range t {
		for b := range t[a] {
			t[a][b] = int8(bonusFor(charClass(a), charClass(b)))
		}
	}
	return
}()

// bonusAt is the bonus of path[j], an ASCII path.
func bonusAt(path string, j int) int {
	prev := classDelim // a path's start counts as after a '/'
	if j > 0 {
		prev = asciiClass[path[j-1]]
	}
	return int(bonusASCII[prev][asciiClass[path[j]]])
}

// subseqASCII reports whether every atom's characters appear in order in
// the folded ASCII string s.
func subseqASCII(atoms [][]rune, s string) bool {
	for _, a := range atoms {
		t := s
		for _, r := range a {
			k := strings.IndexByte(t, byte(r))
			if k < 0 {
				return false
			}
			t = t[k+1:]
		}
	}
	return true
}

// probeASCII is probe for an ASCII path, with the reference scorer's
// results.
func (m *matcher) probeASCII(p *pattern, e *entry, top *topN) (uint32, bool, bool) {
	if p.mask&^e.mask != 0 || !p.ascii || !subseqASCII(p.atoms, e.lower) {
		return 0, false, false
	}
	name := e.lower[e.nameAt:]
	inName := !e.isDir && len(p.atoms) == 1 && len(name) <= maxMatchRunes && subseqASCII(p.atoms, name)
	if !inName && len(e.lower) > maxMatchRunes {
		return 0, false, false // too long to match (see maxMatchRunes)
	}
	tier := 0
	if inName {
		tier = tierInName
	}
	if name == p.text {
		tier += tierExactName
	}
	if !top.admitsBound(uint32(tier+p.bound), e) {
		return 0, true, false
	}
	lo := 0
	if inName {
		lo = int(e.nameAt)
	}
	total := 0
	for _, a := range p.atoms {
		total += m.alignASCII(a, e.path, e.lower, lo)
	}
	score := uint32(min(total, 0xffff) + tier)
	return score, true, top.admits(score)
}

// alignASCII scores atom a against path[lo:], which holds it as a
// subsequence, as align does, on the only columns an alignment can use.
func (m *matcher) alignASCII(a []rune, path, lower string, lo int) int {
	if len(a) == 0 {
		return 0
	}
	if len(a) == 1 {
		// The position of the highest bonus, the first of equals.
		c, best := byte(a[0]), -1
		for j := lo; ; {
			k := strings.IndexByte(lower[j:], c)
			if k < 0 {
				break
			}
			j += k
			if b := bonusAt(path, j); b > best {
				best = b
				if b == bonusBoundaryDelim {
					break // none is higher
				}
			}
			j++
		}
		return scoreMatch + best*firstCharMult
	}
	start := lo + strings.IndexByte(lower[lo:], byte(a[0]))
	end := lo + strings.LastIndexByte(lower[lo:], byte(a[len(a)-1])) + 1
	m.folded, m.bonus = m.folded[:0], m.bonus[:0]
	for j := start; j < end; j++ {
		m.folded = append(m.folded, rune(lower[j]))
		m.bonus = append(m.bonus, bonusAt(path, j))
	}
	m.idx = m.idx[:0]
	s, _ := m.align(a)
	return s
}
