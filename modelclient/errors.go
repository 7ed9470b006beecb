package modelclient

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/codexd/codexd/internal/lazyre"
)

var (
	// ErrMissingKey: the provider's env_key variable is unset or blank.
	// The error is a *MissingKeyError naming the variable.
	ErrMissingKey = errors.New("missing API key")
	// ErrStreamIdle: no event arrived for the provider's
	// stream_idle_timeout_ms.
	ErrStreamIdle = errors.New("response stream idle")
	// ErrStreamCut: the stream ended, or its connection broke, before
	// response.completed.
	ErrStreamCut = errors.New("response stream disconnected before completion")
	// ErrClosed: Next was called after Close.
	ErrClosed = errors.New("stream closed")
	// ErrEventTooLarge: one event of the stream is over MaxEventBytes. The
	// stream ends; it is not a cut stream, and retrying would not help.
	ErrEventTooLarge = errors.New("response stream event too large")
)

// MaxEventBytes bounds one server-sent event (its lines, data and framing):
// a response's largest event, response.completed, carries its whole
// output, which no real response brings near this.
const MaxEventBytes = 16 << 20

// MissingKeyError says which variable should hold the API key.
type MissingKeyError struct {
	Var          string
	Instructions string
}

func (e *MissingKeyError) Error() string {
	s := fmt.Sprintf("missing API key: environment variable %s is not set", e.Var)
	if e.Instructions != "" {
		s += ". " + e.Instructions
	}
	return s
}

func (e *MissingKeyError) Is(target error) bool { return target == ErrMissingKey }

// APIError is an HTTP error answer of the provider.
type APIError struct {
	StatusCode int
	// Message, Type, Code and Param come from the body's
	// {"error": {...}} object when it has one; Message is the body's text
	// otherwise.
	Message, Type, Code, Param string
	// Header is the response's header (Retry-After, x-request-id, ...).
	Header http.Header
	// RetryAfter is what Retry-After-Ms or Retry-After asked for; zero when
	// neither was given (or parsable).
	RetryAfter time.Duration
	// Attempts is how many requests were made, retries included.
	Attempts int
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("model API answered HTTP %d", e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		s += " " + t
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

// Retryable reports whether the status is one that is retried (429, 5xx).
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// ResponseError is a failure the model reported inside the stream:
// response.failed, response.incomplete, or an error event.
type ResponseError struct {
	// Event is "response.failed", "response.incomplete" or "error".
	Event      string
	ResponseID string
	// Code is the error code ("server_error", "rate_limit_exceeded",
	// "context_length_exceeded", ...) or, for response.incomplete, the
	// reason ("max_output_tokens", "content_filter").
	Code    string
	Message string
	// RetryAfter is parsed from a rate-limit message ("Please try again in
	// 1.5s"), as Codex does; zero when absent.
	RetryAfter time.Duration
}

func (e *ResponseError) Error() string {
	switch {
	case e.Event == "response.incomplete":
		return fmt.Sprintf("model response incomplete: %s", e.Code)
	case e.Code != "" && e.Message != "":
		return fmt.Sprintf("model response failed: %s: %s", e.Code, e.Message)
	case e.Message != "":
		return "model response failed: " + e.Message
	case e.Code != "":
		return "model response failed: " + e.Code
	}
	return "model response failed"
}

// fatalCodes are failures Codex does not retry: asking again cannot help.
var fatalCodes = map[string]bool{
	"context_length_exceeded": true,
	"insufficient_quota":      true,
	"usage_not_included":      true,
	"invalid_prompt":          true,
	"cyber_policy":            true,
}

// Retryable reports whether asking again may succeed (Codex retries
// response.failed unless the code says it cannot help).
func (e *ResponseError) Retryable() bool {
	return e.Event != "response.incomplete" && !fatalCodes[e.Code]
}

var tryAgainRE = lazyre.Regexp{Expr: `(?i)try again in\s*(\d+(?:\.\d+)?)\s*(s|ms|seconds?)`}

func parseTryAgain(msg string) time.Duration {
	m := tryAgainRE.Get().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	if m[2] == "ms" {
		return time.Duration(v * float64(time.Millisecond))
	}
	return time.Duration(v * float64(time.Second))
}
