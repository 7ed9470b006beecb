package tomledit

import (
	"bytes"
	"errors"
	"slices"
	"strings"
)

// ErrArrayOfTables is returned for a path that runs through an [[array]]
// of tables, which neither tomledit nor Codex's editing writes into.
var ErrArrayOfTables = errors.New("tomledit: the path runs through an array of tables")

// ErrNotTable is returned for a path whose parent is a value, not a table.
var ErrNotTable = errors.New("tomledit: cannot set value on non-table parent")

// Doc is a document being edited.
type Doc struct {
	src   []byte
	stmts []stmt
}

// Parse scans src. Line ends are written back as "\n", as Codex writes
// them.
func Parse(src []byte) (*Doc, error) {
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	return parse(src)
}

func parse(src []byte) (*Doc, error) {
	stmts, err := scan(src)
	if err != nil {
		return nil, err
	}
	return &Doc{src: src, stmts: stmts}, nil
}

// Bytes returns the document's text.
func (d *Doc) Bytes() []byte { return slices.Clone(d.src) }

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}

// splice replaces src[from:to] with text and rescans.
func (d *Doc) splice(from, to int, text string) error {
	var b bytes.Buffer
	b.Write(d.src[:from])
	b.WriteString(text)
	b.Write(d.src[to:])
	nd, err := parse(b.Bytes())
	if err != nil {
		return err
	}
	*d = *nd
	return nil
}

// insert puts text at off, on a line of its own.
func (d *Doc) insert(off int, text string) error {
	if off > 0 && d.src[off-1] != '\n' {
		text = "\n" + text
	}
	return d.splice(off, off, text)
}

func (d *Doc) find(kind stmtKind, path []string) int {
	for i, st := range d.stmts {
		if st.kind == kind && slices.Equal(st.path, path) {
			return i
		}
	}
	return -1
}

// under reports whether any statement lies within path (path itself
// excluded for key/values).
func (d *Doc) under(path []string) bool {
	for _, st := range d.stmts {
		if hasPrefix(st.path, path) && len(st.path) > len(path) {
			return true
		}
	}
	return false
}

// throughArray reports whether path runs through an array of tables.
func (d *Doc) throughArray(path []string) bool {
	for _, st := range d.stmts {
		if st.kind == kindArray && hasPrefix(path, st.path) {
			return true
		}
	}
	return false
}

// removeSubtree removes every statement within path, and path's own
// header, each with the comments above it.
func (d *Doc) removeSubtree(path []string) error {
	for i := len(d.stmts) - 1; i >= 0; i-- {
		st := d.stmts[i]
		if hasPrefix(st.path, path) {
			if err := d.splice(st.lead, st.end, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// Set sets path to v (see Map for the value types), keeping the key's
// spacing and comments when it exists.
func (d *Doc) Set(path []string, v any) error {
	if len(path) == 0 {
		return errors.New("tomledit: empty path")
	}
	if d.throughArray(path) {
		return ErrArrayOfTables
	}
	m, isMap := v.(*Map)
	if i := d.find(kindKeyVal, path); i >= 0 {
		st := d.stmts[i]
		if !isMap {
			s, err := formatValue(v)
			if err != nil {
				return err
			}
			return d.splice(st.valStart, st.valEnd, s)
		}
		// A value becomes a table of its own.
		if err := d.splice(st.lead, st.end, ""); err != nil {
			return err
		}
		return d.insertNew(path, v)
	}
	if i := d.find(kindTable, path); i >= 0 && isMap {
		return d.replaceTable(i, m)
	}
	if d.find(kindTable, path) >= 0 || d.under(path) {
		if err := d.removeSubtree(path); err != nil {
			return err
		}
	}
	return d.insertNew(path, v)
}

// replaceTable rewrites the body of the [table] at stmts[i] as m, keeping
// the comments, spacing and trailing comments of the keys m keeps.
func (d *Doc) replaceTable(i int, m *Map) error {
	hdr := d.stmts[i]
	path := hdr.path
	kept := map[string]stmt{}
	for _, st := range d.stmts {
		if st.kind == kindKeyVal && slices.Equal(st.table, path) && len(st.path) == len(path)+1 {
			kept[st.path[len(path)]] = st
		}
	}
	var b strings.Builder
	for j, k := range m.Keys {
		if _, sub := m.Values[j].(*Map); sub {
			continue
		}
		s, err := formatValue(m.Values[j])
		if err != nil {
			return err
		}
		if st, ok := kept[k]; ok {
			b.Write(d.src[st.lead:st.valStart])
			b.WriteString(s)
			b.Write(d.src[st.valEnd:st.end])
			if d.src[st.end-1] != '\n' {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteString(formatKey(k) + " = " + s + "\n")
	}
	sub, err := subsections(path, m)
	if err != nil {
		return err
	}
	b.WriteString(sub)
	// Drop the old body and the table's sections, then write the new.
	for j := len(d.stmts) - 1; j >= 0; j-- {
		st := d.stmts[j]
		if j != i && hasPrefix(st.path, path) {
			if err := d.splice(st.lead, st.end, ""); err != nil {
				return err
			}
		}
	}
	at := d.stmts[d.find(kindTable, path)].end
	return d.insert(at, b.String())
}

// insertNew adds path = v where path does not exist yet.
func (d *Doc) insertNew(path []string, v any) error {
	m, isMap := v.(*Map)
	// The deepest existing ancestor decides where v goes.
	for k := len(path) - 1; k >= 0; k-- {
		prefix := path[:k]
		rest := path[k:]
		if k == 0 {
			return d.insertInto(-1, nil, rest, v, isMap, m)
		}
		if i := d.find(kindKeyVal, prefix); i >= 0 {
			st := d.stmts[i]
			if st.members == nil {
				return ErrNotTable
			}
			return d.expandInline(i, rest, v)
		}
		if i := d.find(kindTable, prefix); i >= 0 {
			return d.insertInto(i, prefix, rest, v, isMap, m)
		}
		if !d.under(prefix) {
			continue
		}
		// prefix is a table made by dotted keys, or implied by deeper
		// headers.
		if len(rest) == 1 && !isMap {
			last := -1
			for j, st := range d.stmts {
				if st.kind == kindKeyVal && hasPrefix(st.path, prefix) && len(st.table) < len(prefix) {
					last = j
				}
			}
			if last >= 0 {
				st := d.stmts[last]
				s, err := formatValue(v)
				if err != nil {
					return err
				}
				key := formatPath(append(append([]string{}, prefix[len(st.table):]...), rest[0]))
				return d.insert(st.end, key+" = "+s+"\n")
			}
		}
		return d.insertSection(d.subtreeEnd(prefix), path, v, isMap, m)
	}
	return nil
}

// subtreeEnd is the end of the last statement within path (the whole
// document for the root).
func (d *Doc) subtreeEnd(path []string) int {
	end := 0
	for _, st := range d.stmts {
		if hasPrefix(st.path, path) || hasPrefix(st.table, path) && len(path) > 0 {
			end = max(end, st.end)
		}
	}
	if len(path) == 0 && len(d.stmts) > 0 {
		end = d.stmts[len(d.stmts)-1].end
	}
	return end
}

// insertInto adds rest = v to the explicit table at stmts[hdr] (-1: the
// root), whose path is tpath.
func (d *Doc) insertInto(hdr int, tpath, rest []string, v any, isMap bool, m *Map) error {
	if len(rest) == 1 && !isMap {
		s, err := formatValue(v)
		if err != nil {
			return err
		}
		// After the table's last key, or right under its header.
		at := 0
		if hdr >= 0 {
			at = d.stmts[hdr].end
		}
		for _, st := range d.stmts {
			if st.kind == kindKeyVal && slices.Equal(st.table, tpath) && (hdr < 0 || st.start > d.stmts[hdr].start) {
				at = max(at, st.end)
			}
		}
		return d.insert(at, formatKey(rest[0])+" = "+s+"\n")
	}
	full := append(append([]string{}, tpath...), rest...)
	return d.insertSection(d.subtreeEnd(tpath), full, v, isMap, m)
}

// insertSection writes a new section at off: [path] holding m, or the
// header of path's parent holding path's last key = v.
func (d *Doc) insertSection(off int, path []string, v any, isMap bool, m *Map) error {
	if !isMap {
		m = &Map{Keys: []string{path[len(path)-1]}, Values: []any{v}}
		path = path[:len(path)-1]
	}
	s, err := section(path, m, off == 0)
	if err != nil {
		return err
	}
	if off == 0 && len(d.src) > 0 {
		s += "\n"
	}
	return d.insert(off, s)
}

// expandInline turns the inline table at stmts[i] into a section of its
// own (as toml_edit does before writing into it) and sets rest in it.
func (d *Doc) expandInline(i int, rest []string, v any) error {
	st := d.stmts[i]
	path := st.path
	var b strings.Builder
	b.WriteString("\n[" + formatPath(path) + "]\n")
	for _, mb := range st.members {
		b.WriteString(formatPath(mb.key) + " = " + mb.raw + "\n")
	}
	// The section goes where its table's key/values end.
	if err := d.splice(st.lead, st.end, ""); err != nil {
		return err
	}
	at := 0
	for _, s := range d.stmts {
		if s.kind == kindKeyVal && slices.Equal(s.table, st.table) {
			at = max(at, s.end)
		}
	}
	if j := d.find(kindTable, st.table); j >= 0 && len(st.table) > 0 {
		at = max(at, d.stmts[j].end)
	}
	text := b.String()
	if at == 0 {
		text = text[1:]
	}
	if err := d.insert(at, text); err != nil {
		return err
	}
	return d.Set(append(append([]string{}, path...), rest...), v)
}

// Delete removes path (a key, or a table with everything in it) and the
// comments above it. It reports whether anything was removed.
func (d *Doc) Delete(path []string) (bool, error) {
	if len(path) == 0 {
		return false, errors.New("tomledit: empty path")
	}
	if d.throughArray(path) {
		return false, ErrArrayOfTables
	}
	if i := d.find(kindKeyVal, path); i >= 0 {
		st := d.stmts[i]
		return true, d.splice(st.lead, st.end, "")
	}
	// A key inside an inline table: the inline table is written anew
	// without it.
	for k := len(path) - 1; k > 0; k-- {
		i := d.find(kindKeyVal, path[:k])
		if i < 0 {
			continue
		}
		st := d.stmts[i]
		rel := path[k:]
		var parts []string
		found := false
		for _, mb := range st.members {
			if slices.Equal(mb.key, rel) {
				found = true
				continue
			}
			parts = append(parts, formatPath(mb.key)+" = "+mb.raw)
		}
		if !found {
			return false, nil
		}
		text := "{}"
		if len(parts) > 0 {
			text = "{ " + strings.Join(parts, ", ") + " }"
		}
		return true, d.splice(st.valStart, st.valEnd, text)
	}
	if d.find(kindTable, path) >= 0 || d.under(path) {
		return true, d.removeSubtree(path)
	}
	return false, nil
}

// Upsert sets path to v like Set, except that a table v is merged into an
// existing table key by key (Codex's "upsert" merge strategy).
func (d *Doc) Upsert(path []string, v any) error {
	m, ok := v.(*Map)
	if !ok || !d.isTable(path) {
		return d.Set(path, v)
	}
	// Codex writes the merged table back whole, which makes it (and every
	// table in it) explicit: a table only implied by deeper headers gets
	// its own header.
	if err := d.ensureExplicit(path); err != nil {
		return err
	}
	for i, k := range m.Keys {
		if err := d.Upsert(append(slices.Clone(path), k), m.Values[i]); err != nil {
			return err
		}
	}
	return nil
}

// isTable reports whether path holds a table (a section, an inline
// table, or a table made by dotted keys or deeper headers).
func (d *Doc) isTable(path []string) bool {
	if i := d.find(kindKeyVal, path); i >= 0 {
		return d.stmts[i].members != nil
	}
	return d.find(kindTable, path) >= 0 || d.under(path)
}

// ensureExplicit gives a table implied by deeper headers a [header] of
// its own, above its first section.
func (d *Doc) ensureExplicit(path []string) error {
	if d.find(kindTable, path) >= 0 || d.find(kindKeyVal, path) >= 0 {
		return nil
	}
	for _, st := range d.stmts {
		if !hasPrefix(st.path, path) {
			continue
		}
		if st.kind == kindKeyVal && len(st.table) < len(path) {
			return nil // a table of dotted keys
		}
		text := "[" + formatPath(path) + "]\n"
		if st.lead > 0 {
			text = "\n" + text
		}
		return d.splice(st.lead, st.lead, text)
	}
	return nil
}
