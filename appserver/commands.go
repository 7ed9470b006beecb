package appserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/appproto"
	"github.com/codexd/codexd/execserver/procs"
)

// Defaults of command/exec.
const (
	// DefaultExecTimeout applies when timeoutMs is omitted.
	DefaultExecTimeout = 10 * time.Second
	// DefaultExecOutputCap caps each captured stream when outputBytesCap
	// is omitted.
	DefaultExecOutputCap = 1 << 20
	// timeoutExitCode is what a command that timed out reports, as in
	// Codex (the timeout(1) convention).
	timeoutExitCode = 124
)

// execProc is one running command/exec of a connection.
type execProc struct {
	id     string // the client's process id, or an internal one
	sess   *session
	proc   *procs.Process
	stdin  bool // accepts command/exec/write
	writes atomic.Uint64
}

var internalExecIDs atomic.Uint64

func (s *Server) commandExec(ctx context.Context, c *call, p appproto.CommandExecParams) (appproto.CommandExecResponse, error) {
	var none appproto.CommandExecResponse
	if len(p.Command) == 0 {
		return none, invalidRequest("command must not be empty")
	}
	if p.SandboxPolicy != nil && p.PermissionProfile != nil {
		return none, invalidRequest("`permissionProfile` cannot be combined with `sandboxPolicy`")
	}
	if p.TimeoutMs != nil && *p.TimeoutMs < 0 {
		return none, invalidParams(fmt.Sprintf("command/exec timeoutMs must be non-negative, got %d", *p.TimeoutMs))
	}
	if p.DisableTimeout && p.TimeoutMs != nil {
		return none, invalidParams("command/exec cannot set both timeoutMs and disableTimeout")
	}
	if p.DisableOutputCap && p.OutputBytesCap != nil {
		return none, invalidParams("command/exec cannot set both outputBytesCap and disableOutputCap")
	}
	streamOut, streamIn := p.StreamStdoutStderr || p.Tty, p.StreamStdin || p.Tty
	if (streamOut || streamIn) && p.ProcessID == nil {
		return none, invalidRequest("command/exec tty or streaming requires a client-supplied processId")
	}
	if p.Size != nil && !p.Tty {
		return none, invalidParams("command/exec size is only valid when tty is true")
	}
	cwd, err := s.execCwd(p.Cwd)
	if err != nil {
		return none, err
	}
	pol, err := s.execSandbox(p, cwd)
	if err != nil {
		return none, err
	}
	argv, err := s.confineExec(pol, p.Command)
	if err != nil {
		return none, err
	}
	e := &execProc{sess: c.sess, stdin: streamIn}
	if p.ProcessID != nil {
		e.id = *p.ProcessID
	} else {
		e.id = "\x00internal-" + strconv.FormatUint(internalExecIDs.Add(1), 10)
	}
	pm, ok := c.sess.addExec(e)
	if !ok {
		return none, invalidRequest(fmt.Sprintf("duplicate active command/exec process id: %q", e.id))
	}
	opts := procs.StartOptions{ID: e.id, Argv: argv, Cwd: cwd, Env: execEnv(s.cfg.CommandEnv, p.Env), TTY: p.Tty,
		PipeStdin: streamIn && !p.Tty, Held: true}
	if p.Size != nil {
		opts.Rows, opts.Cols = p.Size.Rows, p.Size.Cols
	}
	proc, err := pm.Start(opts)
	if err != nil {
		c.sess.removeExec(e)
		return none, internalError("failed to spawn command: " + err.Error())
	}
	e.proc = proc
	timeout := DefaultExecTimeout
	if p.TimeoutMs != nil {
		timeout = time.Duration(*p.TimeoutMs) * time.Millisecond
	}
	if p.DisableTimeout {
		timeout = 0
	}
	capBytes := DefaultExecOutputCap
	if p.OutputBytesCap != nil {
		capBytes = int(min(*p.OutputBytesCap, 1<<40))
	}
	if p.DisableOutputCap {
		capBytes = -1
	}
	// The answer waits for the process to end, after every outputDelta.
	go s.runExec(c, e, streamOut, timeout, capBytes)
	return none, errDeferred
}

// execCwd resolves the cwd of a command: the server's by default, and
// always inside the fs roots when they are set.
func (s *Server) execCwd(cwd *string) (string, error) {
	dir := ""
	if cwd != nil && *cwd != "" {
		dir = *cwd
		if !filepath.IsAbs(dir) {
			wd, _ := os.Getwd()
			dir = filepath.Join(wd, dir)
		}
	}
	check := dir
	if check == "" {
		check, _ = os.Getwd()
	}
	if len(s.fs.Roots()) > 0 {
		if err := s.fs.CheckPath(check); err != nil {
			return "", invalidRequest(err.Error())
		}
	}
	return dir, nil
}

// execEnv is base's environment (the server's own when base is nil) with
// the request's overrides applied; a null value unsets a variable.
func execEnv(base func() map[string]string, over map[string]*string) map[string]string {
	var env map[string]string
	if base != nil {
		env = base()
	} else {
		env = make(map[string]string)
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	for k, v := range over {
		if v == nil {
			delete(env, k)
		} else {
			env[k] = *v
		}
	}
	return env
}

// runExec streams or collects a command's output until it closes, then
// answers the command/exec request.
func (s *Server) runExec(c *call, e *execProc, stream bool, timeout time.Duration, capBytes int) {
	defer c.sess.removeExec(e)
	proc := e.proc
	defer proc.Release()
	var timedOut atomic.Bool
	if timeout > 0 {
		tm := time.AfterFunc(timeout, func() {
			timedOut.Store(true)
			proc.Terminate()
		})
		defer tm.Stop()
	}
	var out [2]strings.Builder // stdout, stderr
	var sent [2]int            // bytes captured or streamed, per stream
	var after uint64
	exitCode := -1
	for closed := false; !closed; {
		batch := proc.Events(after, 256<<10)
		for _, ev := range batch.Events {
			after = ev.Seq
			switch ev.Kind {
			case procs.EventOutput:
				i := 0
				if ev.Stream == procs.StreamStderr {
					i = 1
				}
				data := ev.Data
				reached := false
				if capBytes >= 0 {
					room := capBytes - sent[i]
					if room <= 0 {
						continue // over the cap, which was reported already
					}
					if len(data) >= room {
						data, reached = data[:room], true
					}
				}
				sent[i] += len(data)
				if stream {
					name := "stdout"
					if i == 1 {
						name = "stderr"
					}
					c.sess.send(newNote(appproto.CommandExecOutputDelta.Name(), appproto.CommandExecOutputDeltaNotification{
						ProcessID: e.id, Stream: name, DeltaBase64: base64.StdEncoding.EncodeToString(data), CapReached: reached}))
				} else {
					out[i].Write(data)
				}
			case procs.EventExited:
				exitCode = ev.ExitCode
			case procs.EventClosed:
				closed = true
			}
		}
		proc.Ack(after)
		if closed {
			break
		}
		if err := proc.Wait(background, after); err != nil {
			break
		}
	}
	if timedOut.Load() {
		exitCode = timeoutExitCode
	}
	c.respond(appproto.CommandExecResponse{ExitCode: exitCode, Stdout: validUTF8(out[0].String()), Stderr: validUTF8(out[1].String())}, nil)
}

func noActiveExec(id string) error {
	return invalidRequest(fmt.Sprintf("no active command/exec for process id %q", id))
}

func (s *Server) commandExecWrite(ctx context.Context, c *call, p appproto.CommandExecWriteParams) (appproto.EmptyResponse, error) {
	if p.DeltaBase64 == nil && !p.CloseStdin {
		return appproto.EmptyResponse{}, invalidParams("command/exec/write requires deltaBase64 or closeStdin")
	}
	e := c.sess.exec(p.ProcessID)
	if e == nil || e.proc == nil {
		return appproto.EmptyResponse{}, noActiveExec(p.ProcessID)
	}
	if !e.stdin {
		return appproto.EmptyResponse{}, invalidRequest(fmt.Sprintf("command/exec process id %q does not accept stdin (start it with streamStdin or tty)", p.ProcessID))
	}
	if p.DeltaBase64 != nil {
		data, err := base64.StdEncoding.DecodeString(*p.DeltaBase64)
		if err != nil {
			return appproto.EmptyResponse{}, invalidRequest("command/exec/write requires valid base64 deltaBase64: " + err.Error())
		}
		if len(data) > 0 {
			id := strconv.FormatUint(e.writes.Add(1), 10)
			if _, err := e.proc.Write(ctx, id, data); err != nil {
				return appproto.EmptyResponse{}, internalError(err.Error())
			}
		}
	}
	if p.CloseStdin {
		if err := e.proc.CloseStdin(ctx); err != nil {
			return appproto.EmptyResponse{}, internalError(err.Error())
		}
	}
	return appproto.EmptyResponse{}, nil
}

func (s *Server) commandExecTerminate(ctx context.Context, c *call, p appproto.CommandExecTerminateParams) (appproto.EmptyResponse, error) {
	e := c.sess.exec(p.ProcessID)
	if e == nil || e.proc == nil {
		return appproto.EmptyResponse{}, noActiveExec(p.ProcessID)
	}
	e.proc.Terminate()
	return appproto.EmptyResponse{}, nil
}

func (s *Server) commandExecResize(ctx context.Context, c *call, p appproto.CommandExecResizeParams) (appproto.EmptyResponse, error) {
	e := c.sess.exec(p.ProcessID)
	if e == nil || e.proc == nil {
		return appproto.EmptyResponse{}, noActiveExec(p.ProcessID)
	}
	if err := e.proc.Resize(p.Size.Rows, p.Size.Cols); err != nil {
		return appproto.EmptyResponse{}, invalidRequest(fmt.Sprintf("command/exec process id %q has no terminal to resize", p.ProcessID))
	}
	return appproto.EmptyResponse{}, nil
}

func peekProcessID(raw jsontext.Value) string {
	var p struct {
		ProcessID string `json:"processId"`
	}
	if jsonUnmarshalLoose(raw, &p) != nil {
		return ""
	}
	return p.ProcessID
}
