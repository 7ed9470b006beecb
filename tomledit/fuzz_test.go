package tomledit

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// mapSet and mapDelete are what Set and Delete must do to the decoded
// document; ok is false where the path runs through a non-table.
func mapSet(m map[string]any, path []string, v any) bool {
	for _, p := range path[:len(path)-1] {
		next, exists := m[p]
		if !exists {
			n := map[string]any{}
			m[p] = n
			m = n
			continue
		}
		nm, isMap := next.(map[string]any)
		if !isMap {
			return false
		}
		m = nm
	}
	m[path[len(path)-1]] = v
	return true
}

func mapDelete(m map[string]any, path []string) {
	for _, p := range path[:len(path)-1] {
		nm, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = nm
	}
	delete(m, path[len(path)-1])
}

// FuzzEdit checks on any document BurntSushi/toml accepts that a Set or a
// Delete yields TOML whose values are the old ones with just that change.
func FuzzEdit(f *testing.F) {
	f.Add("# c\nmodel = \"a\" # t\n[features]\nx = true\n", "model", "b", false)
	f.Add("features.plugins = false\n[tools]\nx = 1\n", "features.y", "v", false)
	f.Add("tui = { theme = \"a\" }\n[t]\nx = 1\n", "tui.pet", "cat", false)
	f.Add("[a.b]\nc = 1\n[a.d]\ne = [\n 1, # x\n 2]\n", "a.b", "", true)
	f.Add("[[arr]]\nx = 1\n", "arr.y", "z", false)
	f.Add("s = '''\nx\n'''\nk = 1979-05-27 07:32:00Z\n", "new.deep.key", "v", false)
	f.Add("", "a", "\\ it's \"q\"\n", false)
	f.Fuzz(func(t *testing.T, src, key, val string, del bool) {
		if !utf8.ValidString(val) || !utf8.ValidString(key) {
			return // values arrive as JSON text, which is UTF-8
		}
		var before map[string]any
		if _, err := toml.Decode(src, &before); err != nil {
			return
		}
		if strings.Contains(src, "\r") {
			return // a lone \r is kept as it is; CRLF is folded
		}
		d, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("Parse refused TOML that BurntSushi/toml accepts: %v", err)
		}
		path := strings.Split(key, ".")
		want := before
		if del {
			if _, err := d.Delete(path); err != nil {
				if errors.Is(err, ErrArrayOfTables) {
					return
				}
				t.Fatal(err)
			}
			mapDelete(want, path)
		} else {
			if err := d.Set(path, val); err != nil {
				if errors.Is(err, ErrArrayOfTables) || errors.Is(err, ErrNotTable) {
					return
				}
				t.Fatal(err)
			}
			if !mapSet(want, path, val) {
				t.Fatalf("Set through a non-table succeeded:\n%s", d.Bytes())
			}
		}
		var after map[string]any
		if _, err := toml.Decode(string(d.Bytes()), &after); err != nil {
			t.Fatalf("edited text is not TOML: %v\n--- before\n%s\n--- after\n%s", err, src, d.Bytes())
		}
		if !reflect.DeepEqual(after, want) {
			t.Fatalf("values differ\n--- before\n%s\n--- after\n%s\ngot  %v\nwant %v", src, d.Bytes(), after, want)
		}
	})
}

// FuzzFromJSON checks that any JSON value FromJSON accepts can be written
// and reads back as TOML.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`"x"`, `1`, `1.5`, `1e300`, `-0.0`, `true`, `null`, `[1,"a",[{}]]`,
		`{"b":1,"a":{"c":[1,2]},"q":"it's \\ \n"}`, `{"a":null}`, `18446744073709551615`, `[1,2]x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := FromJSON([]byte(raw))
		if err != nil || v == nil {
			return
		}
		d, err := Parse(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Set([]string{"k"}, v); err != nil {
			t.Fatalf("Set(%s): %v", raw, err)
		}
		var out map[string]any
		if _, err := toml.Decode(string(d.Bytes()), &out); err != nil {
			t.Fatalf("%s wrote invalid TOML: %v\n%s", raw, err, d.Bytes())
		}
	})
}

// FuzzArrayTables checks on any document BurntSushi/toml accepts that
// appending a [[key]] entry, or deleting the i-th, yields TOML whose
// values are the old ones with just that change, or is refused.
func FuzzArrayTables(f *testing.F) {
	f.Add("# c\nmodel = \"a\"\n[features]\nx = true\n", "skills.config", "/p/SKILL.md", -1)
	f.Add("[[skills.config]]\nname = \"a\"\nenabled = false\n\n[tui]\nx = 1\n", "skills.config", "b", 0)
	f.Add("[[a]]\nx = 1\n[a.sub]\ny = 2\n[[a]]\nx = 3\n", "a", "z", 0)
	f.Add("skills = 1\n", "skills.config", "v", -1)
	f.Add("skills.bundled.enabled = false\n", "skills.config", "v", -1)
	f.Fuzz(func(t *testing.T, src, key, val string, del int) {
		if !utf8.ValidString(val) || !utf8.ValidString(key) || strings.Contains(src, "\r") {
			return
		}
		var before map[string]any
		if _, err := toml.Decode(src, &before); err != nil {
			return
		}
		d, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("Parse refused TOML that BurntSushi/toml accepts: %v", err)
		}
		path := strings.Split(key, ".")
		if del >= 0 {
			if err := d.DeleteArrayTable(path, del); err != nil {
				return
			}
		} else if err := d.AppendArrayTable(path, &Map{Keys: []string{"v"}, Values: []any{val}}); err != nil {
			return
		}
		var after map[string]any
		if _, err := toml.Decode(string(d.Bytes()), &after); err != nil {
			t.Fatalf("edited text is not TOML: %v\n--- before\n%s\n--- after\n%s", err, src, d.Bytes())
		}
		// The change, on the decoded values.
		parent := before
		for _, p := range path[:len(path)-1] {
			next, ok := parent[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				parent[p] = next
			}
			parent = next
		}
		last := path[len(path)-1]
		list, _ := parent[last].([]map[string]any)
		if del >= 0 {
			list = append(list[:del:del], list[del+1:]...)
		} else {
			list = append(list, map[string]any{"v": val})
		}
		if len(list) == 0 {
			delete(parent, last)
		} else {
			parent[last] = list
		}
		if !reflect.DeepEqual(pruned(after), pruned(before)) {
			t.Fatalf("values differ\n--- before\n%s\n--- after\n%s\ngot  %v\nwant %v", src, d.Bytes(), after, before)
		}
	})
}

// pruned is m without its empty tables: a table that held only the
// deleted entries goes with them.
func pruned(m map[string]any) map[string]any {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			if len(pruned(sub)) == 0 {
				delete(m, k)
			}
		}
	}
	return m
}
