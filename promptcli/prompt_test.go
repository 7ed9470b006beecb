package promptcli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

func TestPrepareUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badSchema := write("bad.json", `{"type":`)
	dupSchema := write("dup.json", `{"type":"object","type":"string"}`)
	cases := []struct {
		name string
		o    Options
		msg  string
	}{
		{"empty stdin", Options{Stdin: strings.NewReader(" \n")}, "no prompt: stdin was empty"},
		{"dash, empty stdin", Options{Prompt: "-", Stdin: strings.NewReader("")}, "no prompt: stdin was empty"},
		{"not UTF-8", Options{Prompt: "-", Stdin: strings.NewReader("ok\xff\xfe")}, "not valid UTF-8 (invalid byte at offset 2)"},
		{"UTF-16", Options{Stdin: strings.NewReader("\xff\xfeh\x00i\x00")}, "looks like UTF-16LE"},
		{"missing schema", Options{Prompt: "p", OutputSchemaFile: filepath.Join(dir, "missing.json")}, "--output-schema: open "},
		{"bad schema", Options{Prompt: "p", OutputSchemaFile: badSchema}, "is not valid JSON"},
		{"duplicate names", Options{Prompt: "p", OutputSchemaFile: dupSchema}, "is not valid JSON"},
	}
	for _, tc := range cases {
		_, err := Prepare(tc.o)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want a UsageError with %q", tc.name, err, tc.msg)
		}
	}
}

// On a terminal, the prompt is never waited for: no argument is a usage
// error, and an argument is taken alone.
func TestPrepareTerminalStdin(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if _, err := Prepare(Options{Stdin: tty}); err == nil || !strings.Contains(err.Error(), "no prompt: give one as an argument, or pipe it into stdin") {
		t.Errorf("err = %v", err)
	}
	var errb strings.Builder
	j, err := Prepare(Options{Prompt: "hi", Stdin: tty, Stderr: &errb})
	if err != nil || j.Prompt() != "hi" || errb.Len() != 0 {
		t.Errorf("Prepare = %v, %q; stderr %q", err, j.Prompt(), errb.String())
	}
}

func TestPreparePrompt(t *testing.T) {
	cases := []struct {
		arg, stdin, want string
	}{
		{"", "\xef\xbb\xbfhello\n", "hello\n"},
		{"-", "from stdin", "from stdin"},
		{"do it", "", "do it"},
		{"do it", " \n", "do it"},
		{"do it", "context", "do it\n\n<stdin>\ncontext\n</stdin>"},
		{"do it", "context\n", "do it\n\n<stdin>\ncontext\n</stdin>"},
	}
	for _, tc := range cases {
		j, err := Prepare(Options{Prompt: tc.arg, Stdin: strings.NewReader(tc.stdin)})
		if err != nil || j.Prompt() != tc.want {
			t.Errorf("Prepare(%q, stdin %q) = %v, %q; want %q", tc.arg, tc.stdin, err, j.Prompt(), tc.want)
		}
	}
}
