package execserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/codexd/codexd/execproto"
	"github.com/codexd/codexd/execserver/fsops"
	"github.com/codexd/codexd/execserver/procs"
	"github.com/codexd/codexd/jsonrpc"
)

// decodeParams checks raw against the method's shape, as Codex's serde
// types would (execproto.CheckParams), then decodes the canonical form. A
// failure is -32602 with a message in the client's terms.
func decodeParams[P any](method string, raw jsontext.Value) (P, error) {
	var p P
	canonical, err := execproto.CheckParams(method, raw)
	if err != nil {
		return p, invalidParams(err.Error())
	}
	if canonical == nil {
		canonical = jsontext.Value("null")
	}
	if p, err = jsonrpc.DecodeParams[P](canonical); err != nil {
		// The shape and the Go type disagree: a bug here, not the
		// client's; say so without Go's words.
		return p, jsonrpc.NewError(jsonrpc.CodeInternalError, "params of "+method+" could not be decoded after they were checked")
	}
	return p, nil
}

func invalidParams(msg string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, msg)
}

// rpcError maps the building blocks' errors to the codes Codex uses.
func rpcError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	var coded interface{ RPCCode() int64 }
	if errors.As(err, &coded) {
		return jsonrpc.NewError(coded.RPCCode(), err.Error())
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, err.Error())
}

// handle registers a gated method: params are checked and decoded first,
// as Codex does, then the handshake is enforced for the method's family.
func handle[P, R any](c *connection, mux *jsonrpc.Mux, m jsonrpc.Method[P, R], family string,
	fn func(ctx context.Context, sess *session, p P) (R, error)) {
	mux.HandleFunc(m.Name(), func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p, err := decodeParams[P](m.Name(), req.Params)
		if err != nil {
			return nil, err
		}
		var sess *session
		if family != "" {
			if sess, err = c.gate(family); err != nil {
				return nil, err
			}
		}
		r, err := fn(ctx, sess, p)
		if err != nil {
			if errors.Is(err, jsonrpc.ErrAsyncResponse) {
				return nil, err
			}
			return nil, rpcError(err)
		}
		return r, nil
	})
}

func (c *connection) mux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	mux.NotFound = jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
			fmt.Sprintf("exec-server stub does not implement `%s` yet", req.Method))
	})
	// initialized is a notification; its handshake effect happens in admit.
	mux.HandleFunc(execproto.MethodInitialized, func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.IsCall() {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound,
				fmt.Sprintf("exec-server stub does not implement `%s` yet", req.Method))
		}
		return nil, nil
	})
	// initialize is answered by admit, on the reader.
	handle(c, mux, execproto.EnvironmentInfoM, "environment info",
		func(ctx context.Context, _ *session, _ execproto.Unit) (execproto.EnvironmentInfo, error) {
			return c.srv.environment(), nil
		})
	handle(c, mux, execproto.EnvironmentStatus, "environment status",
		func(ctx context.Context, _ *session, _ execproto.Unit) (execproto.EnvironmentStatusResponse, error) {
			return execproto.EnvironmentStatusResponse{Status: "ready"}, nil
		})
	c.registerProcess(mux)
	c.registerFS(mux)
	c.registerHTTP(mux)
	return mux
}

func (c *connection) registerProcess(mux *jsonrpc.Mux) {
	handle(c, mux, execproto.ProcessStart, "exec", c.processStart)
	handle(c, mux, execproto.ProcessRead, "exec",
		func(ctx context.Context, sess *session, p execproto.ProcessReadParams) (execproto.ProcessReadResponse, error) {
			opts := procs.ReadOptions{MaxBytes: procs.NoByteLimit}
			if p.AfterSeq != nil {
				opts.AfterSeq = *p.AfterSeq
			}
			if p.MaxBytes != nil {
				opts.MaxBytes = int(min(*p.MaxBytes, 1<<40))
			}
			if p.WaitMs != nil {
				opts.Wait = time.Duration(min(*p.WaitMs, uint64(24*time.Hour/time.Millisecond))) * time.Millisecond
			}
			res, err := sess.procs.Read(ctx, p.ProcessID, opts)
			if err != nil {
				return execproto.ProcessReadResponse{}, err
			}
			out := execproto.ProcessReadResponse{
				Chunks:  make([]execproto.ProcessOutputChunk, len(res.Chunks)),
				NextSeq: res.NextSeq,
				Exited:  res.Exited,
				Closed:  res.Closed,
			}
			for i, ch := range res.Chunks {
				out.Chunks[i] = execproto.ProcessOutputChunk{Seq: ch.Seq, Stream: execproto.OutputStream(ch.Stream), Chunk: ch.Data}
			}
			if res.Exited {
				code := int32(res.ExitCode)
				out.ExitCode = &code
			}
			return out, nil
		})
	handle(c, mux, execproto.ProcessWrite, "exec",
		func(ctx context.Context, sess *session, p execproto.ProcessWriteParams) (execproto.ProcessWriteResponse, error) {
			st, err := sess.procs.Write(ctx, p.ProcessID, p.WriteID, p.Chunk)
			if errors.Is(err, procs.ErrStdinWrite) {
				// The child's stdin is gone (it exited, or stopped
				// reading). Codex 0.169 queues the bytes and answers
				// accepted all the same, on pipes and ttys alike; the
				// bytes are lost either way. (After process/terminate
				// found it running, procs.ErrStdinTerminated is the
				// -32603 Codex answers.)
				return execproto.ProcessWriteResponse{Status: execproto.WriteAccepted}, nil
			}
			if err != nil {
				return execproto.ProcessWriteResponse{}, err
			}
			return execproto.ProcessWriteResponse{Status: execproto.WriteStatus(st)}, nil
		})
	handle(c, mux, execproto.ProcessSignalM, "exec",
		func(ctx context.Context, sess *session, p execproto.ProcessSignalParams) (execproto.ProcessSignalResponse, error) {
			err := sess.procs.Signal(p.ProcessID, syscall.SIGINT)
			if errors.Is(err, procs.ErrUnknownProcess) {
				err = nil // Codex answers {} for an unknown or exited process
			}
			return execproto.ProcessSignalResponse{}, err
		})
	handle(c, mux, execproto.ProcessTerminate, "exec",
		func(ctx context.Context, sess *session, p execproto.ProcessTerminateParams) (execproto.ProcessTerminateResponse, error) {
			if h := c.srv.testHookProcess; h != nil {
				h(execproto.MethodProcessTerminate)
			}
			proc, err := sess.procs.Get(p.ProcessID)
			if err != nil {
				return execproto.ProcessTerminateResponse{Running: false}, nil
			}
			// The answer goes out before the kill, so that it precedes the
			// process/exited the kill causes, as in Codex.
			_, exited := proc.ExitCode()
			if err := jsonrpc.ConnFrom(ctx).Respond(jsonrpc.RequestFrom(ctx).ID, execproto.ProcessTerminateResponse{Running: !exited}, nil); err != nil {
				return execproto.ProcessTerminateResponse{}, err
			}
			sess.procs.Terminate(p.ProcessID)
			return execproto.ProcessTerminateResponse{}, jsonrpc.ErrAsyncResponse
		})
}

func (c *connection) processStart(ctx context.Context, sess *session, p execproto.ProcessStartParams) (execproto.ProcessStartResponse, error) {
	if h := c.srv.testHookProcess; h != nil {
		h(execproto.MethodProcessStart)
	}
	if _, err := fsops.ParsePathURI(p.Cwd); err != nil {
		var fe *fsops.Error
		if errors.As(err, &fe) && fe.Code == fsops.CodeInvalidRequest {
			// A URI that names no local path (a host, a drive letter):
			// Codex rejects it as an invalid param of process/start.
			return execproto.ProcessStartResponse{}, invalidParams(
				fmt.Sprintf("cwd URI `%s` is not valid on this exec-server host: %s", p.Cwd, fe.Message))
		}
		return execproto.ProcessStartResponse{}, err
	}
	cwd, err := c.srv.fs.CheckURI(p.Cwd)
	if err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	if err := checkSpawnable(sess, p); err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	argv, sandboxed, err := confineProcess(p.Sandbox, p.Argv)
	if err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	sandboxType := execproto.SandboxTypeNone
	if sandboxed {
		sandboxType = execproto.SandboxTypeLinuxSeccomp
	}
	cwdDir, err := c.srv.openCwd(p.ProcessID, cwd)
	if err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	if cwdDir != nil {
		defer cwdDir.Close()
	}
	env := p.Env
	if p.EnvPolicy != nil {
		env = buildEnv(*p.EnvPolicy, p.Env)
	}
	opts := procs.StartOptions{ID: p.ProcessID, Argv: argv, Cwd: cwd, CwdDir: cwdDir, Env: env, TTY: p.Tty, PipeStdin: p.PipeStdin, Held: true}
	if p.Arg0 != nil {
		opts.Arg0 = *p.Arg0
	}
	proc, err := sess.procs.Start(opts)
	if err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	// The response goes out before any notification of the process, as in
	// Codex; only then does the pump start.
	conn := jsonrpc.ConnFrom(ctx)
	if err := conn.Respond(jsonrpc.RequestFrom(ctx).ID, execproto.ProcessStartResponse{
		ProcessID: p.ProcessID, SandboxType: sandboxType,
	}, nil); err != nil {
		return execproto.ProcessStartResponse{}, err
	}
	c.mu.Lock()
	attached := c.pumpCtx.Err() == nil
	if attached {
		c.pumps.Add(1)
	}
	c.mu.Unlock()
	if attached {
		go c.pump(c.pumpCtx, conn, sess, proc, 0)
	} else {
		proc.Release() // no client to wait for
	}
	return execproto.ProcessStartResponse{}, jsonrpc.ErrAsyncResponse
}

// checkSpawnable refuses, with Codex's messages, what it cannot pass to
// exec: an empty program name, and NUL bytes in the argv or the
// environment. An empty argv and a process id in use are left to the
// manager, which reports them first, as Codex does.
func checkSpawnable(sess *session, p execproto.ProcessStartParams) error {
	if len(p.Argv) == 0 {
		return nil
	}
	if _, err := sess.procs.Get(p.ProcessID); !errors.Is(err, procs.ErrUnknownProcess) {
		return nil
	}
	if p.Argv[0] == "" {
		if p.Tty {
			return jsonrpc.NewError(jsonrpc.CodeInternalError, "missing program for PTY spawn")
		}
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "missing program for pipe spawn")
	}
	for _, a := range p.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return jsonrpc.NewError(jsonrpc.CodeInternalError, "nul byte found in provided data")
		}
	}
	if p.Arg0 != nil && strings.IndexByte(*p.Arg0, 0) >= 0 {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "nul byte found in provided data")
	}
	for k, v := range p.Env {
		if strings.IndexByte(k, 0) >= 0 || strings.IndexByte(v, 0) >= 0 {
			return jsonrpc.NewError(jsonrpc.CodeInternalError, "data provided contains a nul byte")
		}
	}
	return nil
}

// buildEnv applies Codex's shell environment policy to the server's own
// environment, then overlays env.
func buildEnv(pol execproto.ExecEnvPolicy, env map[string]string) map[string]string {
	out := map[string]string{}
	switch pol.Inherit {
	case "all":
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				out[k] = v
			}
		}
	case "core":
		for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "TERM"} {
			if v, ok := os.LookupEnv(k); ok {
				out[k] = v
			}
		}
	}
	match := func(patterns []string, k string) bool {
		for _, pat := range patterns {
			if ok, _ := path.Match(strings.ToUpper(pat), strings.ToUpper(k)); ok {
				return true
			}
		}
		return false
	}
	if !pol.IgnoreDefaultExcludes {
		for k := range out {
			if match([]string{"*KEY*", "*SECRET*", "*TOKEN*"}, k) {
				delete(out, k)
			}
		}
	}
	for k := range out {
		if match(pol.Exclude, k) {
			delete(out, k)
		}
	}
	for k, v := range pol.Set {
		out[k] = v
	}
	if len(pol.IncludeOnly) > 0 {
		for k := range out {
			if !match(pol.IncludeOnly, k) {
				delete(out, k)
			}
		}
	}
	for k, v := range env {
		out[k] = v
	}
	return out
}

func (c *connection) fsConn() *fsops.ConnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fs
}

func (c *connection) registerFS(mux *jsonrpc.Mux) {
	fs := c.srv.fs
	c.registerReadFile(mux)
	fsMethod(c, mux, execproto.FsWriteFile, fs.WriteFile)
	fsMethod(c, mux, execproto.FsCreateDirectory, fs.CreateDirectory)
	fsMethod(c, mux, execproto.FsGetMetadata, fs.GetMetadata)
	fsMethod(c, mux, execproto.FsReadDirectory, fs.ReadDirectory)
	fsMethod(c, mux, execproto.FsRemove, fs.Remove)
	fsMethod(c, mux, execproto.FsCopy, fs.Copy)
	fsMethod(c, mux, execproto.FsCanonicalize, fs.Canonicalize)
	fsMethod(c, mux, execproto.FsWalk, fs.Walk)
	fsConnMethod(c, mux, execproto.FsOpen, fs.Open)
	fsConnMethod(c, mux, execproto.FsReadBlock, fs.ReadBlock)
	fsConnMethod(c, mux, execproto.FsWriteBlock, fs.WriteBlock)
	fsConnMethod(c, mux, execproto.FsClose, fs.Close)
	fsConnMethod(c, mux, execproto.FsWatchMissing, fs.WatchMissing)
}

// fsMethod registers an fs method that needs no state of the connection.
func fsMethod[P, R any](c *connection, mux *jsonrpc.Mux, m jsonrpc.Method[P, R], fn func(context.Context, P) (R, error)) {
	handle(c, mux, m, "filesystem", func(ctx context.Context, _ *session, p P) (R, error) {
		if raw, acc, ok := fsSandboxAccesses(p); ok {
			if err := checkFSSandbox(raw, acc...); err != nil {
				var none R
				return none, err
			}
		}
		return fn(ctx, p)
	})
}

// fsConnMethod registers one that works on the connection's open handles or
// watches.
func fsConnMethod[P, R any](c *connection, mux *jsonrpc.Mux, m jsonrpc.Method[P, R], fn func(context.Context, *fsops.ConnState, P) (R, error)) {
	handle(c, mux, m, "filesystem", func(ctx context.Context, _ *session, p P) (R, error) {
		if raw, acc, ok := fsSandboxAccesses(p); ok {
			if err := checkFSSandbox(raw, acc...); err != nil {
				var none R
				return none, err
			}
		}
		return fn(ctx, c.fsConn(), p)
	})
}

func (c *connection) registerHTTP(mux *jsonrpc.Mux) {
	handle(c, mux, execproto.HTTPRequest, "http",
		func(ctx context.Context, _ *session, p execproto.HTTPRequestParams) (execproto.HTTPRequestResponse, error) {
			if p.StreamResponse {
				c.mu.Lock()
				if c.bodyStreams == nil {
					c.bodyStreams = map[string]struct{}{}
				}
				if _, busy := c.bodyStreams[p.RequestID]; busy {
					c.mu.Unlock()
					return execproto.HTTPRequestResponse{}, invalidParams(
						fmt.Sprintf("http/request streamResponse requestId `%s` is already active", p.RequestID))
				}
				c.bodyStreams[p.RequestID] = struct{}{}
				c.mu.Unlock()
			}
			release := func() {
				if p.StreamResponse {
					c.mu.Lock()
					delete(c.bodyStreams, p.RequestID)
					c.mu.Unlock()
				}
			}
			if err := resolveHeaderEnvVars(p.Headers); err != nil {
				release()
				return execproto.HTTPRequestResponse{}, err
			}
			resp, body, err := c.srv.http.Do(ctx, p)
			if err != nil {
				release()
				return resp, err
			}
			if body == nil {
				release()
				return resp, nil
			}
			conn := jsonrpc.ConnFrom(ctx)
			if err := conn.Respond(jsonrpc.RequestFrom(ctx).ID, resp, nil); err != nil {
				body.Close()
				release()
				return resp, err
			}
			c.bodyStreamWG.Add(1)
			go func() {
				defer c.bodyStreamWG.Done()
				defer release()
				body.Run(c.pumpCtx, func(n execproto.HTTPRequestBodyDeltaNotification) error {
					return execproto.HTTPRequestBodyDelta.Notify(c.pumpCtx, conn, n)
				})
			}()
			return resp, jsonrpc.ErrAsyncResponse
		})
}

// resolveHeaderEnvVars appends to each header that names a valueEnvVar the
// value of that variable in the server's environment, as Codex does
// (capability httpHeaderEnvVars): a client can send "Bearer " and the name
// of the variable that holds a token it must not see.
func resolveHeaderEnvVars(headers []execproto.HTTPHeader) error {
	for i := range headers {
		h := &headers[i]
		if h.ValueEnvVar == nil {
			continue
		}
		v, ok := os.LookupEnv(*h.ValueEnvVar)
		if !ok {
			return invalidParams(fmt.Sprintf("http/request header %s requires executor environment variable %s", h.Name, *h.ValueEnvVar))
		}
		h.Value += v
		h.ValueEnvVar = nil
	}
	return nil
}
