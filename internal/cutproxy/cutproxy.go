// Package cutproxy is a loopback TCP proxy that a test can cut, to play a
// network that drops (Cut: the connections it carries are reset, new ones
// still go through) or a server that died (Kill: it also stops accepting).
//
// It is for tests only: product code must never import it.
package cutproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards each connection made to Addr to its target.
type Proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// New starts a proxy to target (host:port) that stops with the test.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.pipe(in, out)
			go p.pipe(out, in)
		}
	}()
	t.Cleanup(func() { p.Kill(); p.wg.Wait() })
	return p
}

// Addr is the host:port to dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut resets every connection the proxy carries; later ones go through.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Kill stops accepting, then cuts.
func (p *Proxy) Kill() {
	p.ln.Close()
	p.Cut()
}

func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}
