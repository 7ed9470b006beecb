//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexd/codexd/execserver"
)

// defaultCodexBin is where `npm install @openai/codex@0.169.0` in /work/codex
// puts the native binary on x86_64 Linux.
const defaultCodexBin = "/work/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"

// codexBin finds the real Codex: $CODEX_BIN, else defaultCodexBin; the test
// is skipped when neither is there.
func codexBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CODEX_BIN"); p != "" {
		if err := executable(p); err != nil {
			t.Skipf("CODEX_BIN=%s: %v; install Codex with `npm install @openai/codex@0.169.0` (see integration/README.md)", p, err)
		}
		return p
	}
	if executable(defaultCodexBin) == nil {
		return defaultCodexBin
	}
	t.Skipf("the real Codex binary is absent: set CODEX_BIN to the native `codex` binary of "+
		"@openai/codex@0.169.0 (or install it at %s); see integration/README.md", defaultCodexBin)
	return ""
}

// executable reports why p is not a runnable file, or nil.
func executable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("not a regular file")
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("not executable")
	}
	return nil
}

// TestCodexExecThroughCodexd runs `codex exec` against a mock Responses API
// model that asks for one exec_command call, with CODEX_EXEC_SERVER_URL
// pointing at a codexd exec-server, and checks that the command ran in
// codexd and its output reached the model.
func TestCodexExecThroughCodexd(t *testing.T) {
	run := runCodexExec(t, "TestCodexExecThroughCodexd", "", "")
	if run == nil {
		return
	}
	run.checkRanThroughServer(t)
	if !strings.Contains(run.toolOutput, run.marker) {
		t.Errorf("the tool output Codex sent the model lacks the marker %q: %q", run.marker, run.toolOutput)
	}
}

// TestCodexExecLargeOutputThroughCodexd is the same with a command that
// prints about 5 MB before the marker. Through Codex's own exec-server,
// Codex gets the output (truncated for the model, with its tail and exit
// code 0). Through codexd it does not. codexd drops the output chunks that
// its pump could not send before they left the 1 MiB ring, which leaves
// gaps in the seq numbers: Codex holds every event after a gap until the
// gap fills. codexd once dropped chunks when the producer outran the
// WebSocket (the tool call then failed with "process event reorder buffer
// exceeds 1048576 bytes"); its notification pump now holds the output, so
// the child waits for the client instead, as with Codex's own server.
func TestCodexExecLargeOutputThroughCodexd(t *testing.T) {
	run := runCodexExec(t, "TestCodexExecLargeOutputThroughCodexd", "seq 1 800000", "")
	if run == nil {
		return
	}
	run.checkRanThroughServer(t)
	if strings.Contains(run.toolOutput, "exec_command failed") || !strings.Contains(run.toolOutput, "exited with code 0") {
		t.Errorf("Codex did not get the large output of the command: %.300q", run.toolOutput)
	}
	if !strings.Contains(run.toolOutput, run.marker) {
		t.Errorf("the tool output Codex sent the model lacks the marker %q, which the command printed last: %.300q", run.marker, run.toolOutput)
	}
}

// TestCodexExecReadOnlyThroughCodexd runs the same turn with Codex's
// sandbox_mode read-only: Codex sends its permission profile with the
// process/start, and codexd must confine the command by it (Codex's own
// exec-server does), so the proof file is never written and the command
// fails. codexd once ignored the member and wrote the file.
func TestCodexExecReadOnlyThroughCodexd(t *testing.T) {
	run := runCodexExec(t, "TestCodexExecReadOnlyThroughCodexd", "", "read-only")
	if run == nil {
		return
	}
	_, _, starts, _ := run.rec.report()
	var ran *startRecord
	for i := range starts {
		if strings.Contains(strings.Join(starts[i].Argv, " "), run.marker) {
			ran = &starts[i]
		}
	}
	if ran == nil {
		t.Fatalf("codexd never got a process/start for the model's command %q", run.command)
	}
	if len(ran.Sandbox) == 0 || string(ran.Sandbox) == "null" {
		t.Errorf("Codex sent no sandbox with the read-only command's process/start")
	}
	if _, err := os.Stat(run.proof); err == nil {
		t.Errorf("the read-only command wrote %s", run.proof)
	}
	if !strings.Contains(run.toolOutput, "Process exited with code 1") {
		t.Errorf("the denied command did not fail as Codex reports it: %.300q", run.toolOutput)
	}
}

// codexRun is what one `codex exec` run left behind.
type codexRun struct {
	marker, proof, command string
	finalText              string
	stdout                 string
	rec                    *recordingServer
	toolOutput             string // what Codex sent the model as the tool's output
}

// runCodexExec runs, in a loopback-only network namespace, `codex exec`
// against the mock model and an exec-server, and returns what happened; in
// the parent process it only starts the child and returns nil. The model
// asks for `echo <marker> > proof.txt && <middle> && cat proof.txt`, which
// leaves two pieces of evidence: a file only it writes, and the marker as
// the last line of its output, which must come back to the model.
func runCodexExec(t *testing.T, name, middle, sandboxMode string) *codexRun {
	t.Helper()
	bin := codexBin(t)
	if !inNetns() {
		runInNetns(t, name, 90*time.Second)
		return nil
	}
	if err := loopbackUp(); err != nil {
		t.Fatalf("bringing up lo in the test's network namespace: %v", err)
	}
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		t.Logf("codex: %s", bytes.TrimSpace(out))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	run := &codexRun{
		marker:    "codexd-was-here-" + hex.EncodeToString(nonce),
		finalText: "The command ran; codexd-integration-done.",
	}
	work := t.TempDir()
	run.proof = filepath.Join(work, "proof.txt")
	run.command = fmt.Sprintf("echo %s > %s && ", run.marker, run.proof)
	if middle != "" {
		run.command += middle + " && "
	}
	run.command += "cat " + run.proof

	// codexd, in process, behind a recorder of what Codex asks of it; or,
	// with CODEXD_INTEGRATION_SERVER_BIN, that binary's exec-server (the
	// codexd binary, or Codex's own as a control) behind a recording relay.
	if sbin := os.Getenv("CODEXD_INTEGRATION_SERVER_BIN"); sbin != "" {
		run.rec = newRecordingRelay(startExecServerBinary(t, sbin))
	} else {
		srv, err := execserver.New(execserver.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		run.rec = newRecordingServer(srv)
	}
	execHTTP := httptest.NewServer(run.rec)
	t.Cleanup(execHTTP.Close)
	execURL := "ws://" + execHTTP.Listener.Addr().String()

	model := newMockResponses("call-codexd-1", run.command, run.finalText)
	modelHTTP := httptest.NewServer(model)
	t.Cleanup(modelHTTP.Close)

	if sandboxMode == "" {
		sandboxMode = "danger-full-access"
	}
	codexHome := t.TempDir()
	config := fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "%s"
check_for_update_on_startup = false
# A login shell sources the machine's profile scripts, which on one CI
# machine took longer than the call's 10 s yield, so the command had
# printed nothing when Codex read it. What is under test is the exec-server
# path, not the profile: Codex runs "bash -c" with this.
allow_login_shell = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false

[feedback]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, sandboxMode, modelHTTP.URL)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, bin, "exec", "--skip-git-repo-check", "-C", work,
		"Run the command and report.")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + codexHome,
		"CODEX_HOME=" + codexHome,
		"CODEX_EXEC_SERVER_URL=" + execURL,
		"RUST_LOG=" + envOr("CODEXD_INTEGRATION_RUST_LOG", "error"),
		"NO_COLOR=1",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	run.stdout = stdout.String()
	t.Logf("codex exec stdout:\n%s", limitLog(run.stdout))
	t.Logf("codex exec stderr:\n%s", limitLog(stderr.String()))
	conns, methods, starts, _ := run.rec.report()
	t.Logf("the exec-server saw %d connection(s); methods: %s", conns, strings.Join(methods, " "))
	for _, st := range starts {
		t.Logf("exec-server process/start: id=%q argv=%q cwd=%s tty=%v", st.ProcessID, st.Argv, st.Cwd, st.Tty)
	}
	t.Logf("exec-server message trace (%d messages):\n%s", len(run.rec.traceLines()), limitLog(strings.Join(run.rec.traceLines(), "\n")))
	if runErr != nil {
		t.Fatalf("codex exec: %v", runErr)
	}
	select {
	case <-model.gotOutput:
	default:
		t.Fatalf("the model never got the tool's output; requests: %d", len(model.snapshot()))
	}
	model.mu.Lock()
	run.toolOutput = model.toolOutput
	model.mu.Unlock()
	t.Logf("tool output Codex sent the model (%d bytes): %s", len(run.toolOutput), limitLog(run.toolOutput))
	return run
}

// checkRanThroughServer asserts that the model's command ran in the
// exec-server, had its effect, and that the model's answer came back.
func (run *codexRun) checkRanThroughServer(t *testing.T) {
	t.Helper()
	conns, _, starts, output := run.rec.report()
	// 1. Codex asked the exec-server to run the model's command.
	var ran *startRecord
	for i := range starts {
		if strings.Contains(strings.Join(starts[i].Argv, " "), run.marker) {
			ran = &starts[i]
		}
	}
	if ran == nil {
		t.Fatalf("codexd never got a process/start for the model's command %q (connections: %d)", run.command, conns)
	}
	if !strings.Contains(output, run.marker) {
		t.Errorf("the exec-server's process output does not contain the marker %q", run.marker)
	}
	// 2. The command had its effect on the machine the exec-server runs on.
	got, err := os.ReadFile(run.proof)
	if err != nil || strings.TrimSpace(string(got)) != run.marker {
		t.Errorf("proof file %s: %q, %v; want %q", run.proof, got, err, run.marker)
	}
	// 3. The model answered after the tool's output, and Codex printed it.
	if !strings.Contains(run.stdout, run.finalText) {
		t.Errorf("codex exec's stdout lacks the model's final answer %q", run.finalText)
	}
}

// limitLog keeps a log readable when a command printed megabytes.
func limitLog(s string) string {
	const keep = 4000
	if len(s) <= 2*keep {
		return s
	}
	return s[:keep] + fmt.Sprintf("\n… %d bytes …\n", len(s)-2*keep) + s[len(s)-keep:]
}

// startExecServerBinary runs `bin exec-server --listen ws://127.0.0.1:0`
// until the test ends and returns the URL it prints.
func startExecServerBinary(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "exec-server", "--listen", "ws://127.0.0.1:0")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	cmd.Dir = home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s exec-server: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Logf("%s exec-server stderr:\n%s", bin, stderr.String())
	})
	urlc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		urlc <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u := <-urlc:
		if !strings.HasPrefix(u, "ws://") {
			t.Fatalf("%s exec-server printed %q, not its ws:// URL", bin, u)
		}
		t.Logf("exec-server binary %s listening on %s", bin, u)
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("%s exec-server printed no URL within 30s", bin)
	}
	return ""
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
