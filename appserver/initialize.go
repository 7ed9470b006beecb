package appserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/codexd/codexd/appproto"
)

func (s *Server) initialize(ctx context.Context, c *call, p appproto.InitializeParams) (appproto.InitializeResponse, error) {
	if !validHeaderValue(p.ClientInfo.Name) {
		return appproto.InitializeResponse{}, invalidRequest(fmt.Sprintf(
			"Invalid clientInfo.name: '%s'. Must be a valid HTTP header value.", p.ClientInfo.Name))
	}
	if err := c.sess.initialize(p); err != nil {
		return appproto.InitializeResponse{}, err
	}
	// Codex's originator is process-wide: the first client names it, and
	// later clients see that name at the head of their user agent.
	s.mu.Lock()
	switch {
	case s.originator != "":
	case p.ClientInfo.Name == "codex_app_server_daemon", p.ClientInfo.Name == "codex-backend":
	default:
		s.originator = p.ClientInfo.Name
	}
	s.mu.Unlock()
	originator := s.originatorName()
	resp := appproto.InitializeResponse{
		UserAgent: fmt.Sprintf("%s/%s (%s; %s) %s (%s; %s)", originator, Version, osInfo(), arch(), terminal(),
			p.ClientInfo.Name, p.ClientInfo.Version),
		CodexHome:      s.core.Config().CodexHome,
		PlatformFamily: "unix",
		PlatformOs:     runtime.GOOS,
	}
	// As Codex with remote control off: the answer, then the status.
	c.respond(resp, nil)
	c.sess.send(newNote(appproto.RemoteControlStatusChanged.Name(), appproto.RemoteControlStatusChangedNotification{
		Status: "disabled", ServerName: hostname(), InstallationID: s.installationID}))
	for _, w := range s.cfg.ConfigWarnings {
		c.sess.send(newNote(appproto.ConfigWarning.Name(), w))
	}
	return resp, errDeferred
}

// hostname is the server's name in remoteControl/status/changed.
var hostname = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
})

// originatorName is the process-wide originator: the name the first
// client gave, or Codex's default. Threads record it (thread.originator)
// and send it to the model provider, as Codex does.
func (s *Server) originatorName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.originator == "" {
		return "codex_cli_rs"
	}
	return s.originator
}

// validHeaderValue reports whether v may be an HTTP header value (Codex
// sends the client's name as one).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

var osInfo = sync.OnceValue(func() string {
	name, version := "", ""
	if f, err := os.Open("/etc/os-release"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), "=")
			if !ok {
				continue
			}
			v = strings.Trim(v, `"'`)
			switch k {
			case "ID":
				if v != "" {
					name = strings.ToUpper(v[:1]) + v[1:]
				}
			case "VERSION_ID":
				version = v
			}
		}
		f.Close()
	}
	if name == "" {
		var u unix.Utsname
		if unix.Uname(&u) == nil {
			return "Linux " + unix.ByteSliceToString(u.Release[:])
		}
		return "Linux"
	}
	// The os_info crate Codex uses writes versions as x.y.z.
	for strings.Count(version, ".") < 2 && version != "" {
		version += ".0"
	}
	return strings.TrimSpace(name + " " + version)
})

func arch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

func terminal() string {
	if t := os.Getenv("TERM_PROGRAM"); t != "" {
		return t
	}
	if t := os.Getenv("TERM"); t != "" {
		return t
	}
	return "unknown"
}
