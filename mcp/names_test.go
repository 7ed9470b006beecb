package mcp

import "testing"

// The names Codex 0.169 gave these servers and tools, observed in its
// model request (servers "ts", "ts.x", "ts-x" and a long dotted name).
func TestQualifyAsCodex(t *testing.T) {
	long := "a.very-long-server-name-for-testing-hash-with-more-chars-and-more-and-more"
	q := qualify([]rawTool{{"ts", "echo"}, {"ts.x", "echo"}, {"ts-x", "echo"}, {long, "x.y-x.y-"}, {"ts", "a.b"}, {"ts", "a-b"}})
	for raw, want := range map[rawTool]qualified{
		{"ts", "echo"}:     {"mcp__ts", "echo"},
		{"ts.x", "echo"}:   {"mcp__ts_x_89ca84140ac6", "echo"},
		{"ts-x", "echo"}:   {"mcp__ts_x_e1f92c78f4e8", "echo"},
		{long, "x.y-x.y-"}: {"mcp__a_very_long_server_name_for_testing_hash_with_more_chars_and_more_and_more", "x_y_x_y_"},
	} {
		if got := q[raw]; got != want {
			t.Errorf("%v: got %v, want %v", raw, got, want)
		}
	}
	// Two tools that sanitise alike get distinct names.
	if a, b := q[rawTool{"ts", "a.b"}], q[rawTool{"ts", "a-b"}]; a.name == b.name || a.name[:4] != "a_b_" {
		t.Errorf("colliding tools: %v %v", a, b)
	}
	if sanitize("") != "_" || sanitize("é") != "_" {
		t.Error("sanitize of empty or non-ASCII")
	}
}
