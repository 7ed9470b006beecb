//go:build !execonly

package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// execEnv gives `codexd exec` a CODEX_HOME, a HOME (so that `bash -l`
// reads no profile of the machine's) and a working directory under
// t.TempDir; it returns the directory.
func execEnv(t *testing.T) string {
	t.Helper()
	t.Setenv("CODEX_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_EXEC_SERVER_URL", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCaptured(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExecUsage(t *testing.T) {
	execEnv(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"exec", "one", "two"}, 2, "one prompt, please (got 2 arguments"},
		{[]string{"exec", "--sandbox", "bogus", "hi"}, 2, "want read-only"},
		{[]string{"exec", "-a", "sometimes", "hi"}, 2, "--ask-for-approval"},
		{[]string{"exec", "--bogus", "hi"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"exec", "--output-schema", filepath.Join(t.TempDir(), "missing.json"), "hi"}, 2, "--output-schema: open "},
		{[]string{"exec", "-"}, 2, "no prompt: stdin was empty"},
		{[]string{"exec", "--json"}, 2, "no prompt: stdin was empty"},
		{[]string{"exec", "--model-provider", "nope", "hi"}, 1, "nope"},
	}
	for _, tc := range cases {
		code, stdout, stderr := runCaptured(tc.args, "")
		if code != tc.code || !strings.Contains(stderr, tc.msg) || stdout != "" {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, tc.code, tc.msg)
		}
	}
	code, stdout, _ := runCaptured([]string{"exec", "--help"}, "")
	for _, want := range []string{"usage: codexd exec", "--json", "--output-last-message FILE", "--output-schema FILE",
		"--ephemeral", "--skip-git-repo-check", "--ask-for-approval POLICY", "--model-provider NAME"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("exec --help: exit %d, stdout lacks %q", code, want)
		}
	}
}

// No prompt and a terminal on stdin: nothing to wait for.
func TestExecNoPromptOnTerminal(t *testing.T) {
	execEnv(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"exec", "--model-provider", "mock"}, tty, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "no prompt: give one as an argument, or pipe it into stdin") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// The whole turn offline on the built-in mock, flags after the prompt as
// codex exec allows, --skip-git-repo-check accepted.
func TestExecMock(t *testing.T) {
	dir := execEnv(t)
	code, stdout, stderr := runCaptured([]string{"exec", "--model-provider", "mock", "--skip-git-repo-check", "-C", dir, "list the files here"}, "")
	if code != 0 || !strings.HasPrefix(stdout, "I ran `echo hello from the mock; ls`. It printed:\n\n```\nhello from the mock\nmarker.txt\n```\n") {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stderr, "Reading additional input from stdin...\ncodexd "+version+" (Codex "+codexVersion+" protocol)\n--------\nworkdir: "+dir+"\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	code, stdout, stderr = runCaptured([]string{"exec", "-C", dir, "MOCK:hello", "--json", "--model-provider=mock", "-o", filepath.Join(dir, "last.txt")}, "")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 4 || lines[2] != `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello from the mock model."}}` {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "last.txt")); err != nil || string(b) != "Hello from the mock model." {
		t.Errorf("-o file: %q, %v", b, err)
	}
	// The prompt from stdin.
	code, stdout, _ = runCaptured([]string{"exec", "-C", dir, "--model-provider", "mock"}, "MOCK:hello")
	if code != 0 || stdout != "Hello from the mock model.\n" {
		t.Errorf("stdin prompt: exit %d, stdout %q", code, stdout)
	}
	// A failed turn exits 1.
	code, stdout, stderr = runCaptured([]string{"exec", "-C", dir, "--model-provider", "mock", "-c", "model_providers.mock.request_max_retries=0", "MOCK:error=400"}, "")
	if code != 1 || stdout != "" || !strings.Contains(stderr, "ERROR: ") {
		t.Errorf("failed turn: exit %d, stdout %q\nstderr:\n%s", code, stdout, stderr)
	}
}

// Nobody can approve in exec: the policy is "never" whatever config.toml
// says, unless -a says otherwise.
func TestExecApprovalDefault(t *testing.T) {
	dir := execEnv(t)
	if err := os.WriteFile(filepath.Join(os.Getenv("CODEX_HOME"), "config.toml"), []byte("approval_policy = \"on-request\"\nmodel_provider = \"mock\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{{nil, "approval: never\n"}, {[]string{"-a", "untrusted"}, "approval: untrusted\n"}} {
		args := append(append([]string{"exec", "-C", dir}, tc.flags...), "MOCK:hello")
		code, _, stderr := runCaptured(args, "")
		if code != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}

// From a fresh clone on a fresh machine: with no CODEX_HOME and no
// ~/.codex, exec creates ~/.codex (private), as Codex does. A CODEX_HOME
// that names a missing directory is an error, as in Codex.
func TestExecFreshHome(t *testing.T) {
	dir := execEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", "")
	code, stdout, stderr := runCaptured([]string{"exec", "-C", dir, "--model-provider", "mock", "MOCK:hello"}, "")
	if code != 0 || stdout != "Hello from the mock model.\n" {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", code, stdout, stderr)
	}
	st, err := os.Stat(filepath.Join(home, ".codex"))
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Errorf("~/.codex: %v, %v", st, err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("CODEX_HOME", missing)
	code, _, stderr = runCaptured([]string{"exec", "-C", dir, "--model-provider", "mock", "MOCK:hello"}, "")
	if code != 1 || !strings.Contains(stderr, "CODEX_HOME "+missing) {
		t.Errorf("missing CODEX_HOME: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("the missing CODEX_HOME was created (%v)", err)
	}
}

// The real process: Ctrl-C while a command runs ends the run with 130, and
// nothing it started is left running, whether the turn got to end or a
// second Ctrl-C cut it short.
func TestExecInterruptLeavesNothingRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, presses := range []int{1, 2} {
		dir := execEnv(t)
		mark := "codexd-exec-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(presses)
		cmd := exec.Command(os.Args[0], "exec", "--model-provider", "mock", "-s", "danger-full-access", "-C", dir, "MOCK:exec sleep 1000")
		cmd.Env = append(os.Environ(), asCodexdEnv+"=1", "CODEXD_TEST_MARK="+mark)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 64)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// The command has been started once its item has.
		deadline := time.After(60 * time.Second)
		var seen []string
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("codexd exited before the command started:\n%s", strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if strings.HasSuffix(l, "'sleep 1000' in "+dir) {
					break wait
				}
			case <-deadline:
				_ = cmd.Process.Kill()
				t.Fatalf("the command did not start:\n%s", strings.Join(seen, "\n"))
			}
		}
		if got := marked(t, mark); len(got) == 0 {
			t.Fatal("no process of the command found: the check below would prove nothing")
		}
		for range presses {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
		}
		for l := range lines {
			seen = append(seen, l)
		}
		err = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("%d Ctrl-C: exit %d (%v)\n%s", presses, code, err, strings.Join(seen, "\n"))
		}
		if got := marked(t, mark); len(got) != 0 {
			t.Errorf("%d Ctrl-C: still running after exit: %q", presses, got)
			for _, p := range got {
				if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ' ')]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
}

// marked lists the live processes (pid and command line) whose
// environment holds CODEXD_TEST_MARK=mark: those the run started.
func marked(t *testing.T, mark string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00CODEXD_TEST_MARK="+mark+"\x00")) && !bytes.HasPrefix(env, []byte("CODEXD_TEST_MARK="+mark+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie runs nothing; its reaper is init now
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " "))
	}
	return out
}

func execFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.Bool("json", false, "")
	fs.String("o", "", "")
	var cf coreFlags
	cf.register(fs, true)
	return fs
}

func TestInterspersed(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"hi"}, []string{"--", "hi"}},
		{[]string{"hi", "--json", "-m", "gpt", "-c", "a=1"}, []string{"--json", "-m", "gpt", "-c", "a=1", "--", "hi"}},
		{[]string{"--model-provider=mock", "hi", "-o", "f"}, []string{"--model-provider=mock", "-o", "f", "--", "hi"}},
		{[]string{"-", "--json"}, []string{"--json", "--", "-"}},
		{[]string{"--json", "--", "-not-a-flag"}, []string{"--json", "--", "-not-a-flag"}},
		{[]string{"--json"}, []string{"--json"}},
		{[]string{"-m"}, []string{"-m"}},
		{[]string{"--bogus", "hi"}, []string{"--bogus", "--", "hi"}},
	}
	for _, tc := range cases {
		if got := interspersed(execFlagSet(), tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("interspersed(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzInterspersed: reordering loses, adds and invents nothing (but one
// "--", added or, with nothing after it, dropped), keeps the arguments in their order, and parses as the flags.
func FuzzInterspersed(f *testing.F) {
	f.Add("hi\x00--json\x00-m\x00gpt")
	f.Add("--\x00-x\x00--json")
	f.Add("-c\x00k=v\x00-\x00-o")
	f.Fuzz(func(t *testing.T, joined string) {
		in := strings.Split(joined, "\x00")
		out := interspersed(execFlagSet(), in)
		a, b := slices.Clone(in), slices.Clone(out)
		if len(b) == len(a)+1 {
			i := slices.Index(b, "--")
			if i < 0 {
				t.Fatalf("%q -> %q: an argument appeared", in, out)
			}
			b = slices.Delete(b, i, i+1)
		}
		if len(a) == len(b)+1 {
			// A "--" with nothing after it is dropped.
			i := slices.Index(a, "--")
			if i < 0 {
				t.Fatalf("%q -> %q: an argument was lost", in, out)
			}
			a = slices.Delete(a, i, i+1)
		}
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("%q -> %q: not the same arguments", in, out)
		}
		fs := execFlagSet()
		fs.SetOutput(io.Discard)
		if fs.Parse(out) == nil {
			// What the flags left is the input's positional arguments
			// (those before a "--", then all after it), in order.
			var pos []string
			for i := 0; i < len(in); i++ {
				if in[i] == "--" {
					pos = append(pos, in[i+1:]...)
					break
				}
				if strings.HasPrefix(in[i], "-") && len(in[i]) > 1 {
					name := strings.TrimLeft(in[i], "-")
					if fl := fs.Lookup(name); fl != nil && !isBoolFlag(fl) && !strings.Contains(name, "=") {
						i++
					}
					continue
				}
				pos = append(pos, in[i])
			}
			if !slices.Equal(fs.Args(), pos) && !(len(pos) == 0 && len(fs.Args()) == 0) {
				t.Fatalf("%q -> %q: arguments %q, want %q", in, out, fs.Args(), pos)
			}
		}
	})
}
