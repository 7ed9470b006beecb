// Package httpreq carries out the exec-server's http/request method (Codex
// 0.169's contract): it sends an HTTP request from the server's host and
// returns the status, headers and body, either buffered in the result or
// streamed as http/request/bodyDelta notifications.
//
// It knows nothing of JSON-RPC: errors are *Error values carrying the
// JSON-RPC code and message Codex would send.
//
// It must never buffer or stream more than Config.MaxBodyBytes of a
// response body, never outlive its deadline, and never send anything but
// http:// and https:// requests.
package httpreq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codexd/codexd/execproto"
)

// JSON-RPC codes used by http/request, the same as Codex's.
const (
	CodeInvalidParams int64 = -32602
	CodeInternalError int64 = -32603
)

// Defaults.
const (
	// DefaultMaxBodyBytes caps a response body (Codex has no cap).
	DefaultMaxBodyBytes = 64 * 1024 * 1024
	// maxRedirects is reqwest's default, which Codex uses.
	maxRedirects = 10
	// streamChunkBytes bounds one bodyDelta.
	streamChunkBytes = 64 * 1024
)

// Error is the error of http/request: the JSON-RPC code and the message.
type Error struct {
	Code    int64
	Message string
}

func (e *Error) Error() string { return e.Message }

// RPCCode returns the JSON-RPC error code.
func (e *Error) RPCCode() int64 { return e.Code }

func invalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func internal(format string, args ...any) *Error {
	return &Error{Code: CodeInternalError, Message: fmt.Sprintf(format, args...)}
}

// Config configures a Client.
type Config struct {
	// DefaultTimeout applies when a request has no timeoutMs; zero means
	// none, which is Codex 0.169's behaviour.
	DefaultTimeout time.Duration
	// MaxTimeout, when not zero, caps every request's timeout, including
	// requests that asked for none.
	MaxTimeout time.Duration
	// MaxBodyBytes caps a response body, buffered or streamed; zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Transport sends the requests; nil means a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Client runs http/request calls. It is safe for concurrent use.
type Client struct {
	cfg       Config
	transport http.RoundTripper
}

// New returns a Client.
func New(cfg Config) *Client {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	rt := cfg.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Codex's client asks for no compression and hands the body over
		// as sent; Go would ask for gzip and unpack it behind the caller's
		// back, dropping Content-Encoding and Content-Length.
		t.DisableCompression = true
		rt = t
	}
	return &Client{cfg: cfg, transport: rt}
}

// CloseIdleConnections releases pooled connections of the transport.
func (c *Client) CloseIdleConnections() {
	if t, ok := c.transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// BodyStream is the body of a streamResponse request, still to be sent.
// Exactly one of Run or Close must be called.
type BodyStream struct {
	requestID string
	resp      *http.Response
	cancel    context.CancelFunc
	max       int64
}

// Do sends the request. For a buffered request it returns the whole
// response and a nil stream. For streamResponse it returns once the headers
// have arrived, with an empty body, and a BodyStream to Run; from then on
// ctx no longer matters and the stream is bounded by the request's timeout
// and by Run's own context.
func (c *Client) Do(ctx context.Context, p execproto.HTTPRequestParams) (execproto.HTTPRequestResponse, *BodyStream, error) {
	req, redirect, timeout, err := c.build(p)
	if err != nil {
		return execproto.HTTPRequestResponse{}, nil, err
	}
	if timeout == 0 {
		// Codex's deadline fires before anything is sent.
		return execproto.HTTPRequestResponse{}, nil, internal("http/request failed: route-aware request timed out")
	}
	// The exchange gets its own context: a streamed body must outlive the
	// caller's ctx, which a server typically cancels once the call has been
	// answered. Until then the caller's ctx still cancels it.
	var cancel context.CancelFunc
	base := context.WithoutCancel(ctx)
	if timeout >= 0 {
		base, cancel = context.WithTimeout(base, timeout)
	} else {
		base, cancel = context.WithCancel(base)
	}
	stopLink := context.AfterFunc(ctx, cancel)
	defer stopLink()
	ctx = base
	req = req.WithContext(ctx)
	hc := &http.Client{
		Transport: c.transport,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if redirect == execproto.HTTPRedirectStop {
				return http.ErrUseLastResponse
			}
			if len(via) >= maxRedirects {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && !clientDeadline(p, timeout) {
			// The server's own limit (--http-timeout), which Codex does not
			// have: say so rather than blame the network.
			return execproto.HTTPRequestResponse{}, nil, internal("http/request failed: request timed out")
		}
		return execproto.HTTPRequestResponse{}, nil, internal("http/request failed: %s", describeSend(err))
	}
	out := execproto.HTTPRequestResponse{
		Status:  uint16(resp.StatusCode),
		Headers: responseHeaders(resp.Header, resp.TransferEncoding),
		Body:    []byte{},
	}
	if p.StreamResponse {
		return out, &BodyStream{requestID: p.RequestID, resp: resp, cancel: cancel, max: c.cfg.MaxBodyBytes}, nil
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBodyBytes+1))
	if err != nil {
		return execproto.HTTPRequestResponse{}, nil, internal("failed to read http/request response body: %s", describe(err, ctx))
	}
	if int64(len(body)) > c.cfg.MaxBodyBytes {
		return execproto.HTTPRequestResponse{}, nil, internal("failed to read http/request response body: %s", tooLarge(c.cfg.MaxBodyBytes))
	}
	out.Body = body
	return out, nil, nil
}

func tooLarge(limit int64) string {
	return fmt.Sprintf("response body exceeds the limit of %d bytes", limit)
}

// clientDeadline reports whether timeout is the one the client asked for.
func clientDeadline(p execproto.HTTPRequestParams, timeout time.Duration) bool {
	return p.TimeoutMs != nil && timeout == time.Duration(*p.TimeoutMs)*time.Millisecond
}

// describeSend words a failure to get a response as Codex (reqwest) does:
// the URL, without the cause (refused, unreachable, timed out while
// waiting for the headers).
func describeSend(err error) string {
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return "error sending request"
	}
	if uerr.Err != nil && uerr.Err.Error() == "too many redirects" {
		return "too many redirects"
	}
	u := uerr.URL
	if pu, perr := url.Parse(u); perr == nil {
		if pu.Path == "" {
			pu.Path = "/"
		}
		u = pu.String()
	}
	return fmt.Sprintf("error sending request for url (%s)", u)
}

// describe words a failure to read a body; a deadline is named as such,
// since Go's own text for it is cryptic.
func describe(err error, ctx context.Context) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "request timed out"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if uerr.Err != nil && uerr.Err.Error() == "too many redirects" {
			return fmt.Sprintf("error following redirect for url (%s): too many redirects", uerr.URL)
		}
		return fmt.Sprintf("error sending request for url (%s): %v", uerr.URL, uerr.Err)
	}
	return err.Error()
}

func (c *Client) build(p execproto.HTTPRequestParams) (*http.Request, execproto.HTTPRedirectPolicy, time.Duration, error) {
	if !isToken(p.Method) {
		return nil, "", 0, invalidParams("http/request method is invalid: invalid HTTP method")
	}
	u, err := parseURL(p.URL)
	if err != nil {
		return nil, "", 0, err
	}
	redirect := p.RedirectPolicy
	switch redirect {
	case "":
		redirect = execproto.HTTPRedirectFollow
	case execproto.HTTPRedirectFollow, execproto.HTTPRedirectStop:
	default:
		return nil, "", 0, invalidParams("unknown variant `%s`, expected `follow` or `stop`", redirect)
	}
	var body io.Reader
	if p.Body != nil {
		body = bytes.NewReader(p.Body)
	}
	req, err := http.NewRequest(p.Method, u.String(), body)
	if err != nil {
		return nil, "", 0, invalidParams("http/request url is invalid: %v", err)
	}
	for _, h := range p.Headers {
		if !isToken(h.Name) {
			return nil, "", 0, invalidParams("http/request header name is invalid: invalid HTTP header name")
		}
		if !validHeaderValue(h.Value) {
			return nil, "", 0, invalidParams("http/request header value is invalid for %s: failed to parse header value", h.Name)
		}
		switch strings.ToLower(h.Name) {
		case "host":
			req.Host = h.Value
		case "content-length", "transfer-encoding", "connection":
			// Go's transport frames the body itself and would reject or
			// ignore these; the body decides them.
		default:
			req.Header.Add(h.Name, h.Value)
		}
	}
	// What Codex's client sends unless told otherwise: "accept: */*" and
	// no user agent (Go would send its own).
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "*/*")
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header.Set("User-Agent", "")
	}
	// timeout < 0 means none.
	timeout := time.Duration(-1)
	if p.TimeoutMs != nil {
		timeout = time.Duration(*p.TimeoutMs) * time.Millisecond
		if *p.TimeoutMs > uint64((1<<63-1)/int64(time.Millisecond)) {
			timeout = -1
		}
	} else if c.cfg.DefaultTimeout > 0 {
		timeout = c.cfg.DefaultTimeout
	}
	if c.cfg.MaxTimeout > 0 && (timeout < 0 || timeout > c.cfg.MaxTimeout) {
		timeout = c.cfg.MaxTimeout
	}
	return req, redirect, timeout, nil
}

// parseURL accepts what Codex (the url crate) accepts for this purpose:
// an absolute http or https URL with a host.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, invalidParams("http/request url is invalid: %v", err)
	}
	if u.Scheme == "" {
		return nil, invalidParams("http/request url is invalid: relative URL without a base")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, invalidParams("http/request only supports http and https URLs, got %s", scheme)
	}
	if u.Host == "" {
		return nil, invalidParams("http/request url is invalid: empty host")
	}
	u.Scheme = scheme
	return u, nil
}

// isToken reports whether s is an RFC 9110 token (method, header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue follows the http crate: no control bytes but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// responseHeaders lists headers with lower-case names, sorted by name
// (Go keeps no wire order across names) with each name's values in order.
// Values that are not UTF-8 are dropped, as Codex does. Go takes
// Transfer-Encoding out of the headers; it is put back.
func responseHeaders(h http.Header, transferEncoding []string) []execproto.HTTPHeader {
	if len(transferEncoding) > 0 && h.Get("Transfer-Encoding") == "" {
		h = h.Clone()
		h.Set("Transfer-Encoding", strings.Join(transferEncoding, ", "))
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]execproto.HTTPHeader, 0, len(h))
	for _, name := range names {
		lower := strings.ToLower(name)
		for _, v := range h[name] {
			if !utf8.ValidString(v) {
				continue
			}
			out = append(out, execproto.HTTPHeader{Name: lower, Value: v})
		}
	}
	return out
}

// Run sends the body as bodyDelta notifications through emit, numbered from
// 1, and ends with one notification that has Done set (and Error when the
// body failed or went over the limit). It stops early, without the final
// notification, when emit fails (the connection is gone) or ctx ends.
func (b *BodyStream) Run(ctx context.Context, emit func(execproto.HTTPRequestBodyDeltaNotification) error) {
	defer b.Close()
	stop := context.AfterFunc(ctx, b.cancel)
	defer stop()
	seq := uint64(1)
	var total int64
	buf := make([]byte, streamChunkBytes)
	final := execproto.HTTPRequestBodyDeltaNotification{RequestID: b.requestID, Delta: []byte{}, Done: true}
	for {
		n, err := b.resp.Body.Read(buf)
		if n > 0 {
			total += int64(n)
			if total > b.max {
				msg := tooLarge(b.max)
				final.Error = &msg
				break
			}
			chunk := append([]byte(nil), buf[:n]...)
			if emit(execproto.HTTPRequestBodyDeltaNotification{RequestID: b.requestID, Seq: seq, Delta: chunk}) != nil {
				return
			}
			seq++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			msg := describe(err, b.resp.Request.Context())
			final.Error = &msg
			break
		}
	}
	final.Seq = seq
	_ = emit(final)
}

// Close abandons the body. It is safe to call more than once.
func (b *BodyStream) Close() {
	b.resp.Body.Close()
	b.cancel()
}
