package modelclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/codexd/codexd/config"
)

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// HTTPClient sends the requests; nil means a client with
	// http.DefaultTransport's settings (proxies from the environment).
	HTTPClient *http.Client
	// Getenv reads the API key and env_http_headers; nil means os.Getenv.
	Getenv func(string) string
	// UserAgent defaults to "codexd".
	UserAgent string
	// OnRetry, if set, is called before each retry sleeps, so that the
	// caller can tell its user (Codex's error {willRetry: true}).
	OnRetry func(Retry)
	// MaxRetryDelay bounds what a server may ask for with Retry-After: a
	// longer wait is not retried and the error is returned. Default 2m.
	MaxRetryDelay time.Duration
	// Sleep waits between retries; nil means a timer that ctx cancels.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a backoff factor in [0.9, 1.1); nil means random.
	Jitter func() float64
	// Auth, when set, signs the requests of a provider that
	// RequiresOpenAIAuth with the user's stored sign-in (Codex's
	// auth.json) instead of its env_key; a provider with no sign-in
	// stored falls back to the env_key.
	Auth Authenticator
}

// Authenticator supplies the credentials of a signed-in user.
type Authenticator interface {
	// Credentials returns the credentials to send; ok is false when the
	// user is not signed in. An error ends the request (an *AuthError).
	Credentials(ctx context.Context) (c Credential, ok bool, err error)
	// Unauthorized is called once when the server answered 401 to stale;
	// it returns fresh credentials (a refreshed token) or an error.
	Unauthorized(ctx context.Context, stale Credential) (Credential, error)
}

// Credential is what a signed-in request carries: "Authorization: Bearer
// <Bearer>" and, for a ChatGPT account, "ChatGPT-Account-ID: <AccountID>".
type Credential struct {
	Bearer, AccountID string
}

// AuthError is a sign-in that could not give credentials (a refresh the
// token endpoint refused: the user must sign in again).
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// Retry describes a retry about to happen.
type Retry struct {
	// Attempt is 1 for the first retry, up to Max.
	Attempt, Max int
	// Delay is how long it waits first: the server's Retry-After, else
	// 200ms·2^(Attempt-1) with ±10% jitter, as Codex.
	Delay time.Duration
	// Err is what failed: an *APIError, or a transport error.
	Err error
}

// Client sends requests to one provider. It is safe for concurrent use.
type Client struct {
	provider config.Provider
	opts     Options
	http     *http.Client
	// endpoint is {base_url}/responses with the provider's query_params.
	endpoint string
}

const backoffBase = 200 * time.Millisecond

// New checks the provider and returns a client for it. The API key is read
// on each Stream (the environment may change), not here.
func New(p config.Provider, opts Options) (*Client, error) {
	if p.WireAPI != "" && p.WireAPI != config.WireResponses {
		return nil, fmt.Errorf("modelclient: provider %q: wire_api %q is not supported: only \"responses\" is", p.ID, p.WireAPI)
	}
	if p.BaseURL == "" {
		if p.Builtin == config.BuiltinMock {
			return nil, fmt.Errorf("modelclient: the built-in mock provider has no URL yet: start the mock model and set its BaseURL")
		}
		return nil, fmt.Errorf("modelclient: provider %q has no base_url", p.ID)
	}
	base, err := url.Parse(p.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("modelclient: provider %q: base_url %q is not an http(s) URL", p.ID, p.BaseURL)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "codexd"
	}
	if opts.MaxRetryDelay == 0 {
		opts.MaxRetryDelay = 2 * time.Minute
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Jitter == nil {
		opts.Jitter = func() float64 { return 0.9 + 0.2*rand.Float64() }
	}
	hc := *opts.HTTPClient
	hc.CheckRedirect = guardRedirect(opts.HTTPClient.CheckRedirect)
	c := &Client{provider: p, opts: opts, http: &hc, endpoint: endpoint(base, p.QueryParams)}
	return c, nil
}

// endpoint joins base and "responses" as the SDK's base URL handling does
// (base_url "http://h/v1" and "http://h/v1/" both give
// "http://h/v1/responses"), with the provider's query parameters.
func endpoint(base *url.URL, query map[string]string) string {
	u := *base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/responses"
	u.RawPath = ""
	if len(query) > 0 {
		q := u.Query()
		for k, v := range query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// guardRedirect keeps credentials on the origin they were meant for: a
// redirect to another scheme, host or port goes without the Authorization
// header or the provider's own headers (which may carry keys), whatever
// next allows. net/http already drops Authorization for another domain;
// this also covers a subdomain, another port and https→http.
func guardRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("modelclient: stopped after 10 redirects")
		}
		orig := via[0].URL
		if req.URL.Scheme != orig.Scheme || req.URL.Host != orig.Host {
			req.Header.Del("Authorization")
			for k := range via[0].Header {
				if _, ok := safeToForward[http.CanonicalHeaderKey(k)]; !ok {
					req.Header.Del(k)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// safeToForward are the headers a cross-origin redirect keeps.
var safeToForward = map[string]struct{}{
	"Accept": {}, "Content-Type": {}, "User-Agent": {}, "Accept-Encoding": {},
}

// Provider returns the provider the client was made for; its
// StreamMaxRetries is the caller's to apply.
func (c *Client) Provider() config.Provider { return c.provider }

// bearer returns the token for the Authorization header, or "" for a
// provider without one.
func (c *Client) bearer() (string, error) {
	if c.provider.ExperimentalBearerToken != "" {
		return c.provider.ExperimentalBearerToken, nil
	}
	if c.provider.EnvKey == "" {
		return "", nil
	}
	v := strings.TrimSpace(c.opts.Getenv(c.provider.EnvKey))
	if v == "" {
		return "", &MissingKeyError{Var: c.provider.EnvKey, Instructions: c.provider.EnvKeyInstructions}
	}
	return v, nil
}

// Stream sends req and returns the response stream once the provider has
// answered 2xx, retrying 429, 5xx and transport failures up to the
// provider's RequestMaxRetries. Errors: a *MissingKeyError before anything
// is sent, an *APIError for an HTTP error, ctx's error when ctx ends.
func (c *Client) Stream(ctx context.Context, req Request) (*Stream, error) {
	var cred *Credential
	if c.opts.Auth != nil && c.provider.RequiresOpenAIAuth && c.provider.ExperimentalBearerToken == "" {
		cr, ok, err := c.opts.Auth.Credentials(ctx)
		if err != nil {
			return nil, &AuthError{Err: err}
		}
		if ok {
			cred = &cr
		}
	}
	token := ""
	if cred == nil {
		var err error
		if token, err = c.bearer(); err != nil {
			return nil, err
		}
	}
	body, err := req.Body()
	if err != nil {
		return nil, fmt.Errorf("modelclient: encoding the request: %w", err)
	}
	header := http.Header{}
	header.Set("User-Agent", c.opts.UserAgent)
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	if cred != nil {
		setCredential(header, *cred)
	}
	for k, v := range c.provider.HTTPHeaders {
		header.Set(k, v)
	}
	for k, env := range c.provider.EnvHTTPHeaders {
		if v := strings.TrimSpace(c.opts.Getenv(env)); v != "" {
			header.Set(k, v)
		}
	}
	for k, vs := range req.Header {
		header.Del(k)
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "text/event-stream")

	max := c.provider.RequestMaxRetries
	refreshed := false
	for attempt := 0; ; attempt++ {
		s, err := c.send(ctx, body, header)
		if err == nil {
			return s, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ae *APIError
		if cred != nil && !refreshed && errors.As(err, &ae) && ae.StatusCode == http.StatusUnauthorized {
			// A token revoked or expired early: refresh once, as Codex's
			// unauthorized recovery does, and send again (not a retry).
			refreshed = true
			fresh, rerr := c.opts.Auth.Unauthorized(ctx, *cred)
			if rerr != nil {
				return nil, &AuthError{Err: rerr}
			}
			cred = &fresh
			setCredential(header, fresh)
			attempt--
			continue
		}
		delay, retry := c.retryDelay(err, attempt+1)
		if !retry || attempt >= max {
			var ae *APIError
			if errors.As(err, &ae) {
				ae.Attempts = attempt + 1
			}
			return nil, err
		}
		if c.opts.OnRetry != nil {
			c.opts.OnRetry(Retry{Attempt: attempt + 1, Max: max, Delay: delay, Err: err})
		}
		if err := c.opts.Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

func setCredential(h http.Header, c Credential) {
	h.Set("Authorization", "Bearer "+c.Bearer)
	h.Del("ChatGPT-Account-ID")
	if c.AccountID != "" {
		h.Set("ChatGPT-Account-ID", c.AccountID)
	}
}

// errIdleTimer is the cause the idle timer cancels a request with.
var errIdleTimer = errors.New("idle timer")

// send makes one request. The stream's context, and the idle timer that
// cancels it, start before the request: a server that never answers the
// headers is as idle as one that stops sending events.
func (c *Client) send(ctx context.Context, body []byte, header http.Header) (*Stream, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	idle := c.provider.StreamIdleTimeout
	if idle <= 0 {
		idle = config.DefaultStreamIdleTimeout
	}
	timer := time.AfterFunc(idle, func() { cancel(errIdleTimer) })
	res, err := c.do(sctx, body, header)
	if err != nil {
		timer.Stop()
		idleFired := errors.Is(context.Cause(sctx), errIdleTimer)
		cancel(nil)
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		if idleFired && ctx.Err() == nil {
			return nil, fmt.Errorf("%w: no response within %v", ErrStreamIdle, idle)
		}
		return nil, err
	}
	return newStream(ctx, sctx, cancel, timer, idle, res), nil
}

// do makes one HTTP exchange and turns a non-2xx answer into an
// *APIError, keeping the status and Retry-After even when the body is not
// JSON.
func (c *Client) do(ctx context.Context, reqBody []byte, header http.Header) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(reqBody))
	if err != nil {
		return nil, err
	}
	hreq.Header = header.Clone()
	res, err := c.http.Do(hreq)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		return res, nil
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &APIError{StatusCode: res.StatusCode, Header: res.Header, RetryAfter: retryAfter(res.Header, time.Now())}
	var body struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Param   json.RawMessage `json:"param"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		e.Message, e.Type, e.Code, e.Param = body.Error.Message, body.Error.Type, codeString(body.Error.Code), codeString(body.Error.Param)
	} else {
		e.Message = strings.TrimSpace(string(data))
		if len(e.Message) > 2048 {
			e.Message = e.Message[:2048] + "…"
		}
	}
	return nil, e
}

// retryDelay says whether err is worth another attempt and after how long.
func (c *Client) retryDelay(err error, attempt int) (time.Duration, bool) {
	backoff := time.Duration(float64(backoffBase<<min(attempt-1, 20)) * c.opts.Jitter())
	var ae *APIError
	if errors.As(err, &ae) {
		if !ae.Retryable() {
			return 0, false
		}
		if ae.RetryAfter > 0 {
			return ae.RetryAfter, ae.RetryAfter <= c.opts.MaxRetryDelay
		}
		return backoff, true
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, ErrStreamIdle) {
		return backoff, true // the request did not get through
	}
	return 0, false
}

// retryAfter reads retry-after-ms (OpenAI's) or Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
