//go:build linux

package appserver

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/agent/agenttest"
	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/execserver/fsops"
	"golang.org/x/sys/unix"
)

func TestCommandExec(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	c := e.dial("exec")
	c.initialize(nil)
	r := c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "echo out; echo err 1>&2; exit 3"}})
	if string(r.Result) != `{"exitCode":3,"stdout":"out\n","stderr":"err\n"}` {
		t.Fatalf("buffered: %s", r)
	}
	dir := t.TempDir()
	r = c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "pwd; echo $FOO; echo ${HOME-unset}"},
		"cwd": dir, "env": map[string]any{"FOO": "bar", "HOME": nil}})
	if r.str(t, "/stdout") != dir+"\nbar\nunset\n" {
		t.Fatalf("cwd and env: %s", r)
	}
	// Streamed output comes as deltas, all before the answer.
	id := c.request(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "echo a; echo b 1>&2"},
		"processId": "p1", "streamStdoutStderr": true})
	resp := c.response(id)
	if string(resp.Result) != `{"exitCode":0,"stdout":"","stderr":""}` {
		t.Fatalf("streamed answer: %s", resp)
	}
	var got strings.Builder
	for _, m := range c.logged() {
		if m.Method == "command/exec/outputDelta" {
			if m.str(t, "/processId") != "p1" {
				t.Fatalf("delta: %s", m)
			}
			b, _ := base64.StdEncoding.DecodeString(m.str(t, "/deltaBase64"))
			got.WriteString(m.str(t, "/stream") + ":" + string(b))
		}
	}
	if got.String() != "stdout:a\nstderr:b\n" && got.String() != "stderr:b\nstdout:a\n" {
		t.Fatalf("deltas %q", got.String())
	}
	// stdin through command/exec/write, closed by closeStdin.
	id = c.request(appproto.MethodCommandExec, map[string]any{"command": []string{"cat"}, "processId": "p2", "streamStdin": true})
	c.call(appproto.MethodCommandExecWrite, map[string]any{"processId": "p2", "deltaBase64": base64.StdEncoding.EncodeToString([]byte("hi\n"))})
	c.call(appproto.MethodCommandExecWrite, map[string]any{"processId": "p2", "closeStdin": true})
	if r := c.response(id); r.str(t, "/stdout") != "hi\n" {
		t.Fatalf("cat: %s", r)
	}
	// A terminal: resize, then terminate.
	id = c.request(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "stty size; read x"}, "processId": "p3",
		"tty": true, "size": map[string]any{"rows": 10, "cols": 40}})
	first := c.next("p3's output", func(m *wmsg) bool {
		return m.Method == "command/exec/outputDelta" && strings.Contains(string(m.Params), `"processId":"p3"`)
	})
	if b, _ := base64.StdEncoding.DecodeString(first.str(t, "/deltaBase64")); !strings.Contains(string(b), "10 40") {
		t.Fatalf("tty size: %q", b)
	}
	c.call(appproto.MethodCommandExecResize, map[string]any{"processId": "p3", "size": map[string]any{"rows": 20, "cols": 50}})
	c.call(appproto.MethodCommandExecTerminate, map[string]any{"processId": "p3"})
	if r := c.response(id); r.Error != nil {
		t.Fatalf("terminated: %s", r)
	}
	// A timeout reports 124.
	if r := c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sleep", "30"}, "timeoutMs": 50}); !strings.Contains(string(r.Result), `"exitCode":124`) {
		t.Fatalf("timeout: %s", r)
	}
	// The cap truncates what is kept.
	if r := c.call(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "printf 0123456789"}, "outputBytesCap": 4}); r.str(t, "/stdout") != "0123" {
		t.Fatalf("cap: %s", r)
	}
	errs := []struct {
		params map[string]any
		code   int64
		msg    string
	}{
		{map[string]any{"command": []string{}}, -32600, "command must not be empty"},
		{map[string]any{"command": []string{"true"}, "timeoutMs": -1}, -32602, "command/exec timeoutMs must be non-negative, got -1"},
		{map[string]any{"command": []string{"true"}, "timeoutMs": 5, "disableTimeout": true}, -32602, "command/exec cannot set both timeoutMs and disableTimeout"},
		{map[string]any{"command": []string{"true"}, "outputBytesCap": 5, "disableOutputCap": true}, -32602, "command/exec cannot set both outputBytesCap and disableOutputCap"},
		{map[string]any{"command": []string{"true"}, "streamStdoutStderr": true}, -32600, "command/exec tty or streaming requires a client-supplied processId"},
	}
	for _, x := range errs {
		if err := c.callErr(appproto.MethodCommandExec, x.params); err.Code != x.code || err.Message != x.msg {
			t.Errorf("%v: %+v", x.params, err)
		}
	}
	for _, m := range []string{appproto.MethodCommandExecTerminate, appproto.MethodCommandExecResize} {
		if err := c.callErr(m, map[string]any{"processId": "nope", "size": map[string]any{"rows": 1, "cols": 1}}); err.Message != `no active command/exec for process id "nope"` {
			t.Errorf("%s: %+v", m, err)
		}
	}
	if err := c.callErr(appproto.MethodCommandExecWrite, map[string]any{"processId": "nope"}); err.Code != -32602 || err.Message != "command/exec/write requires deltaBase64 or closeStdin" {
		t.Errorf("write without data: %+v", err)
	}
	// A duplicate process id, while the first runs.
	id = c.request(appproto.MethodCommandExec, map[string]any{"command": []string{"cat"}, "processId": "p4", "streamStdin": true})
	if err := c.callErr(appproto.MethodCommandExec, map[string]any{"command": []string{"true"}, "processId": "p4"}); err.Message != `duplicate active command/exec process id: "p4"` {
		t.Fatalf("duplicate: %+v", err)
	}
	c.call(appproto.MethodCommandExecTerminate, map[string]any{"processId": "p4"})
	c.response(id)
}

// Process ids belong to their connection, and a connection that goes
// away takes its processes with it.
func TestCommandExecConnectionScoped(t *testing.T) {
	e := newEnv(t, agenttest.Options{}, Config{})
	a, b := e.dial("a"), e.dial("b")
	a.initialize(nil)
	b.initialize(nil)
	a.request(appproto.MethodCommandExec, map[string]any{"command": []string{"sh", "-c", "echo $$; exec sleep 60"},
		"processId": "shared", "streamStdoutStderr": true, "disableTimeout": true})
	out := a.note("command/exec/outputDelta")
	raw, _ := base64.StdEncoding.DecodeString(out.str(t, "/deltaBase64"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid %q", raw)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	if err := b.callErr(appproto.MethodCommandExecTerminate, map[string]any{"processId": "shared"}); err.Message != `no active command/exec for process id "shared"` {
		t.Fatalf("other connection's process: %+v", err)
	}
	a.conn.Close()
	// The process ends when its connection does.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(wait)
	n, err := unix.Poll(fds, int(wait.Milliseconds()))
	for err == unix.EINTR && time.Now().Before(deadline) {
		// The runtime's preemption signals interrupt poll(2).
		n, err = unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
	}
	if err != nil || n != 1 {
		t.Fatalf("the process outlived its connection: poll = %d, %v (%T)", n, err, err)
	}
}

func TestFS(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, agenttest.Options{}, Config{FS: fsops.Config{Roots: []string{root}}})
	c := e.dial("fs")
	c.initialize(nil)
	p := func(name string) string { return filepath.Join(root, name) }
	c.call(appproto.MethodFsWriteFile, map[string]any{"path": p("a.txt"), "dataBase64": base64.StdEncoding.EncodeToString([]byte("hello fs\n"))})
	if r := c.call(appproto.MethodFsReadFile, map[string]any{"path": p("a.txt")}); r.str(t, "/dataBase64") != base64.StdEncoding.EncodeToString([]byte("hello fs\n")) {
		t.Fatalf("read: %s", r)
	}
	c.call(appproto.MethodFsCreateDirectory, map[string]any{"path": p("d1/d2")})
	md := c.call(appproto.MethodFsGetMetadata, map[string]any{"path": p("a.txt")})
	if !strings.Contains(string(md.Result), `"isFile":true`) || strings.Contains(string(md.Result), `"size"`) {
		t.Fatalf("metadata: %s", md)
	}
	c.call(appproto.MethodFsCopy, map[string]any{"sourcePath": p("a.txt"), "destinationPath": p("c.txt")})
	ls := c.call(appproto.MethodFsReadDirectory, map[string]any{"path": root})
	for _, name := range []string{"a.txt", "c.txt", "d1"} {
		if !strings.Contains(string(ls.Result), `"fileName":"`+name+`"`) {
			t.Fatalf("listing lacks %s: %s", name, ls)
		}
	}
	c.call(appproto.MethodFsRemove, map[string]any{"path": p("c.txt")})
	if _, err := os.Stat(p("c.txt")); !os.IsNotExist(err) {
		t.Fatal("not removed")
	}
	errs := []struct {
		method string
		params map[string]any
		code   int64
		msg    string
	}{
		{appproto.MethodFsReadFile, map[string]any{"path": "rel"}, -32600, "Invalid request: AbsolutePathBuf deserialized without a base path"},
		{appproto.MethodFsReadFile, map[string]any{"path": p("zzz")}, -32603, "No such file or directory (os error 2)"},
		{appproto.MethodFsRemove, map[string]any{"path": p("zzz"), "force": false}, -32603, "No such file or directory (os error 2)"},
		{appproto.MethodFsCopy, map[string]any{"sourcePath": p("d1"), "destinationPath": p("d3")}, -32600, "fs/copy requires recursive: true when sourcePath is a directory"},
	}
	// A NUL in a path is refused as Codex refuses it, by every method.
	nul := p("a\x00b")
	for _, m := range []string{appproto.MethodFsReadFile, appproto.MethodFsGetMetadata, appproto.MethodFsReadDirectory,
		appproto.MethodFsCreateDirectory, appproto.MethodFsRemove} {
		errs = append(errs, struct {
			method string
			params map[string]any
			code   int64
			msg    string
		}{m, map[string]any{"path": nul}, -32600, "file name contained an unexpected NUL byte"})
	}
	errs = append(errs, struct {
		method string
		params map[string]any
		code   int64
		msg    string
	}{appproto.MethodFsWriteFile, map[string]any{"path": nul, "dataBase64": ""}, -32600, "file name contained an unexpected NUL byte"},
		struct {
			method string
			params map[string]any
			code   int64
			msg    string
		}{appproto.MethodFsCopy, map[string]any{"sourcePath": nul, "destinationPath": p("c")}, -32600, "file name contained an unexpected NUL byte"})
	for _, x := range errs {
		if err := c.callErr(x.method, x.params); err.Code != x.code || err.Message != x.msg {
			t.Errorf("%s %v: %+v", x.method, x.params, err)
		}
	}
	if err := c.callErr(appproto.MethodFsReadFile, map[string]any{"path": p("d1")}); err.Code != -32600 || !strings.Contains(err.Message, "is not a file") {
		t.Errorf("read a directory: %+v", err)
	}
	if err := c.callErr(appproto.MethodFsWriteFile, map[string]any{"path": p("b"), "dataBase64": "!!"}); err.Code != -32600 || !strings.HasPrefix(err.Message, "fs/writeFile requires valid base64 dataBase64") {
		t.Errorf("bad base64: %+v", err)
	}
	// The roots confine every path, as in the exec-server.
	if err := c.callErr(appproto.MethodFsReadFile, map[string]any{"path": "/etc/hostname"}); err.Code != -32600 {
		t.Errorf("outside the roots: %+v", err)
	}
	if err := c.callErr(appproto.MethodCommandExec, map[string]any{"command": []string{"true"}, "cwd": "/"}); err.Code != -32600 {
		t.Errorf("cwd outside the roots: %+v", err)
	}
	// The exec-server's other refusals hold here too: a symlink out of the
	// roots is resolved before the check, a root is never removed, and a
	// file is never copied onto itself.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p("escape")); err != nil {
		t.Fatal(err)
	}
	if err := c.callErr(appproto.MethodFsReadFile, map[string]any{"path": p("escape/secret")}); err.Code != -32600 {
		t.Errorf("read through a symlink out of the roots: %+v", err)
	}
	if err := c.callErr(appproto.MethodFsWriteFile, map[string]any{"path": p("escape/new"), "dataBase64": ""}); err.Code != -32600 {
		t.Errorf("write through a symlink out of the roots: %+v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Error("a write went through the symlink")
	}
	if err := c.callErr(appproto.MethodFsRemove, map[string]any{"path": root, "recursive": true, "force": true}); err.Code != -32600 {
		t.Errorf("remove a root: %+v", err)
	}
	if _, err := os.Stat(p("a.txt")); err != nil {
		t.Errorf("the root's files after a refused remove: %v", err)
	}
	if err := c.callErr(appproto.MethodFsCopy, map[string]any{"sourcePath": p("a.txt"), "destinationPath": p("a.txt")}); err.Code != -32600 {
		t.Errorf("copy a file onto itself: %+v", err)
	}
}
