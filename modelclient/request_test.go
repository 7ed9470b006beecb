package modelclient

import (
	"encoding/json"
	"testing"
)

// A code-mode request has no tools member; any other has one, even empty.
func TestBodyOmitTools(t *testing.T) {
	for _, c := range []struct {
		omit bool
		want bool
	}{{false, true}, {true, false}} {
		b, err := (&Request{Model: "m", OmitTools: c.omit}).Body()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["tools"]; has != c.want {
			t.Fatalf("OmitTools %v: body %s", c.omit, b)
		}
	}
}
