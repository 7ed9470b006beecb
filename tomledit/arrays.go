package tomledit

import (
	"errors"
	"slices"
)

// ErrNotArrayOfTables is returned for an array edit of a path the document
// holds as something else: a key/value (an inline array) or a [table].
var ErrNotArrayOfTables = errors.New("tomledit: the path is not an array of tables")

// ArrayTables counts the [[path]] entries of the document.
func (d *Doc) ArrayTables(path []string) int {
	n := 0
	for _, st := range d.stmts {
		if st.kind == kindArray && slices.Equal(st.path, path) {
			n++
		}
	}
	return n
}

// notArray reports whether path is held as a value or a table: a
// [table] header, or the parent of other tables or keys when it has no
// [[entry]] of its own.
func (d *Doc) notArray(path []string) bool {
	return d.find(kindKeyVal, path) >= 0 || d.find(kindTable, path) >= 0 ||
		d.ArrayTables(path) == 0 && d.under(path)
}

// AppendArrayTable adds a [[path]] entry holding m's values (not tables)
// after the array's last entry, or at the end of the document, after a
// blank line, as toml_edit appends one.
func (d *Doc) AppendArrayTable(path []string, m *Map) error {
	if len(path) == 0 {
		return errors.New("tomledit: empty path")
	}
	if d.notArray(path) {
		return ErrNotArrayOfTables
	}
	if d.parentNotTable(path) {
		return ErrNotTable
	}
	b, err := body(m)
	if err != nil {
		return err
	}
	at := len(d.src)
	if last := d.arrayEntry(path, d.ArrayTables(path)-1); last >= 0 {
		_, at = d.entrySpan(last)
	}
	text := "[[" + formatPath(path) + "]]\n" + b
	if at > 0 {
		text = "\n" + text
	}
	return d.insert(at, text)
}

// DeleteArrayTable removes the i-th [[path]] entry (from 0): its header,
// its keys and sub-tables, and the comments and blank lines above it.
func (d *Doc) DeleteArrayTable(path []string, i int) error {
	if d.notArray(path) {
		return ErrNotArrayOfTables
	}
	j := d.arrayEntry(path, i)
	if j < 0 {
		return errors.New("tomledit: no such array entry")
	}
	from, to := d.entrySpan(j)
	return d.splice(from, to, "")
}

// arrayEntry is the statement index of the i-th [[path]] header, or -1.
func (d *Doc) arrayEntry(path []string, i int) int {
	if i < 0 {
		return -1
	}
	for j, st := range d.stmts {
		if st.kind == kindArray && slices.Equal(st.path, path) {
			if i == 0 {
				return j
			}
			i--
		}
	}
	return -1
}

// entrySpan is the text of the entry whose header is stmts[j]: from the
// end of the statement before it to the end of its last key or sub-table.
func (d *Doc) entrySpan(j int) (from, to int) {
	hdr := d.stmts[j]
	to = hdr.end
	for _, st := range d.stmts[j+1:] {
		if st.kind != kindKeyVal && !(hasPrefix(st.path, hdr.path) && len(st.path) > len(hdr.path)) {
			break
		}
		to = st.end
	}
	return hdr.lead, to
}

// parentNotTable reports whether a table above path is a value, or was
// made by a dotted key (which no header may extend).
func (d *Doc) parentNotTable(path []string) bool {
	for _, st := range d.stmts {
		if st.kind != kindKeyVal {
			continue
		}
		for j := len(st.table) + 1; j <= len(st.path) && j < len(path); j++ {
			if slices.Equal(st.path[:j], path[:j]) {
				return true
			}
		}
	}
	return false
}
