package execproto

// HTTP methods of the exec-server, as Codex 0.169 names them.
const (
	// MethodHTTPRequest asks the exec-server to send an HTTP request from
	// its own host.
	MethodHTTPRequest = "http/request"
	// MethodHTTPRequestBodyDelta is the server-to-client notification that
	// carries a streamed response body (streamResponse: true).
	MethodHTTPRequestBodyDelta = "http/request/bodyDelta"
)

// HTTPHeader is one header line. Repeated names are kept as separate
// entries, in order.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// ValueEnvVar, in a request, names an environment variable of the
	// server whose value is appended to Value (a client can send
	// "Bearer " and the name of the variable that holds the token); a
	// variable that is not set fails the request. Never set in responses.
	ValueEnvVar *string `json:"valueEnvVar,omitempty"`
}

// HTTPRedirectPolicy says what to do with a 3xx response.
type HTTPRedirectPolicy string

const (
	// HTTPRedirectFollow follows up to 10 redirects; it is the default.
	HTTPRedirectFollow HTTPRedirectPolicy = "follow"
	// HTTPRedirectStop returns the 3xx response itself.
	HTTPRedirectStop HTTPRedirectPolicy = "stop"
)

// HTTPRequestParams are the params of http/request. Method, URL and
// RequestID are required.
type HTTPRequestParams struct {
	// Method is an HTTP method token such as "GET".
	Method string `json:"method"`
	// URL is an absolute http:// or https:// URL.
	URL string `json:"url"`
	// Headers may be omitted; Codex rejects null.
	Headers []HTTPHeader `json:"headers,omitempty"`
	// Body is the request body (base64 on the wire), omitted for none.
	Body []byte `json:"bodyBase64,omitempty"`
	// TimeoutMs bounds the whole exchange, body included. Codex 0.169 has
	// no timeout when it is omitted or null; 0 times out at once.
	TimeoutMs *uint64 `json:"timeoutMs,omitempty"`
	// RequestID names the stream of http/request/bodyDelta notifications;
	// it must stay unique on the connection until the final delta.
	RequestID string `json:"requestId"`
	// StreamResponse returns as soon as the headers arrive, with an empty
	// body, and sends the body as http/request/bodyDelta notifications.
	StreamResponse bool               `json:"streamResponse,omitzero"`
	RedirectPolicy HTTPRedirectPolicy `json:"redirectPolicy,omitempty"`
}

// HTTPRequestResponse is the result of http/request.
type HTTPRequestResponse struct {
	Status uint16 `json:"status"`
	// Headers have lower-case names; values that are not UTF-8 are dropped.
	Headers []HTTPHeader `json:"headers"`
	// Body is base64 on the wire and "" (never null) when empty; it is
	// always empty when the request asked for streamResponse.
	Body []byte `json:"bodyBase64"`
}

// HTTPRequestBodyDeltaNotification is the params of one
// http/request/bodyDelta notification.
type HTTPRequestBodyDeltaNotification struct {
	RequestID string `json:"requestId"`
	// Seq starts at 1 and grows by one per notification of the request.
	Seq uint64 `json:"seq"`
	// Delta is base64 on the wire; the final notification carries none.
	Delta []byte `json:"deltaBase64"`
	// Done marks the final notification of the request.
	Done bool `json:"done"`
	// Error is set only on a final notification that ends the body early;
	// Codex sends it as null otherwise.
	Error *string `json:"error"`
}
