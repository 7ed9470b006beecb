package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Built-in provider ids (Provider.Builtin).
const (
	BuiltinOpenAI   = "openai"
	BuiltinOllama   = "ollama"
	BuiltinLMStudio = "lmstudio"
	// BuiltinMock is codexd's in-process mock model (package mockmodel).
	BuiltinMock = "mock"
)

// Codex's defaults and caps (codex-rs model-provider-info).
const (
	DefaultRequestMaxRetries = 4
	DefaultStreamMaxRetries  = 5
	DefaultStreamIdleTimeout = 300 * time.Second
	maxRetriesCap            = 100
	// DefaultOpenAIBaseURL is where provider entries without base_url go.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
)

// Provider is one model provider, with Codex's defaults applied.
type Provider struct {
	// ID is the key in model_providers ("openai", "mock", ...).
	ID string
	// Builtin names the built-in this provider is (BuiltinOpenAI, ...), or
	// is empty for one defined in config.toml. BuiltinMock has no BaseURL:
	// the caller starts the mock model and supplies it.
	Builtin string
	// Name is the display name.
	Name string
	// BaseURL is where POST {BaseURL}/responses goes.
	BaseURL string
	WireAPI WireAPI
	// EnvKey names the environment variable holding the API key, sent as
	// "Authorization: Bearer <key>"; empty means no key (a local server).
	EnvKey string
	// EnvKeyInstructions tells the user how to get a key.
	EnvKeyInstructions string
	// ExperimentalBearerToken is a literal token (Codex discourages it);
	// when set it is used instead of EnvKey.
	ExperimentalBearerToken string
	// HTTPHeaders are sent with every request.
	HTTPHeaders map[string]string
	// EnvHTTPHeaders maps a header name to an environment variable; the
	// header is sent when the variable is set and not blank.
	EnvHTTPHeaders map[string]string
	// QueryParams are appended to the request URL.
	QueryParams map[string]string
	// RequestMaxRetries is how often a failed request (429, 5xx, transport
	// error) is retried before the stream starts. At most 100.
	RequestMaxRetries int
	// StreamMaxRetries is how often the caller may retry a response stream
	// that was cut or went idle. At most 100.
	StreamMaxRetries int
	// StreamIdleTimeout is how long a response stream may go without an
	// event before it counts as lost.
	StreamIdleTimeout time.Duration
	// RequiresOpenAIAuth is Codex's flag for providers that log in with an
	// OpenAI account (only the built-in openai).
	RequiresOpenAIAuth bool
	// BaseURLDefault: BaseURL is the built-in openai's default, which
	// openai_base_url did not replace; a ChatGPT sign-in then sends to
	// Codex's ChatGPT backend instead, as Codex does.
	BaseURLDefault bool
}

// fileProvider is a [model_providers.NAME] table.
type fileProvider struct {
	Name                    *string           `toml:"name"`
	BaseURL                 *string           `toml:"base_url"`
	WireAPI                 *WireAPI          `toml:"wire_api"`
	EnvKey                  *string           `toml:"env_key"`
	EnvKeyInstructions      *string           `toml:"env_key_instructions"`
	ExperimentalBearerToken *string           `toml:"experimental_bearer_token"`
	HTTPHeaders             map[string]string `toml:"http_headers"`
	EnvHTTPHeaders          map[string]string `toml:"env_http_headers"`
	QueryParams             map[string]string `toml:"query_params"`
	RequestMaxRetries       *count            `toml:"request_max_retries"`
	StreamMaxRetries        *count            `toml:"stream_max_retries"`
	StreamIdleTimeoutMS     *count            `toml:"stream_idle_timeout_ms"`
	RequiresOpenAIAuth      *bool             `toml:"requires_openai_auth"`
}

// overlay sets on p what f sets.
func (f fileProvider) overlay(p *Provider) {
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setStr(&p.Name, f.Name)
	setStr(&p.BaseURL, f.BaseURL)
	if f.WireAPI != nil {
		p.WireAPI = *f.WireAPI
	}
	setStr(&p.EnvKey, f.EnvKey)
	setStr(&p.EnvKeyInstructions, f.EnvKeyInstructions)
	setStr(&p.ExperimentalBearerToken, f.ExperimentalBearerToken)
	if f.HTTPHeaders != nil {
		p.HTTPHeaders = maps.Clone(f.HTTPHeaders)
	}
	if f.EnvHTTPHeaders != nil {
		p.EnvHTTPHeaders = maps.Clone(f.EnvHTTPHeaders)
	}
	if f.QueryParams != nil {
		p.QueryParams = maps.Clone(f.QueryParams)
	}
	if f.RequestMaxRetries != nil {
		p.RequestMaxRetries = min(int(*f.RequestMaxRetries), maxRetriesCap)
	}
	if f.StreamMaxRetries != nil {
		p.StreamMaxRetries = min(int(*f.StreamMaxRetries), maxRetriesCap)
	}
	if f.StreamIdleTimeoutMS != nil {
		ms := min(int64(*f.StreamIdleTimeoutMS), int64(time.Duration(1<<62)/time.Millisecond))
		p.StreamIdleTimeout = time.Duration(ms) * time.Millisecond
	}
	if f.RequiresOpenAIAuth != nil {
		p.RequiresOpenAIAuth = *f.RequiresOpenAIAuth
	}
}

func defaultProvider(id string) Provider {
	return Provider{
		ID:                id,
		WireAPI:           WireResponses,
		BaseURL:           DefaultOpenAIBaseURL,
		RequestMaxRetries: DefaultRequestMaxRetries,
		StreamMaxRetries:  DefaultStreamMaxRetries,
		StreamIdleTimeout: DefaultStreamIdleTimeout,
	}
}

// builtinProviders are Codex 0.169's built-ins (less amazon-bedrock, which
// needs AWS SigV4) plus codexd's mock. getenv reads CODEX_OSS_PORT and
// CODEX_OSS_BASE_URL, which Codex reads for its local providers.
func builtinProviders(openAIBaseURL string, getenv func(string) string) map[string]Provider {
	openai := defaultProvider(BuiltinOpenAI)
	openai.Builtin = BuiltinOpenAI
	openai.Name = "OpenAI"
	if openAIBaseURL != "" {
		openai.BaseURL = openAIBaseURL
	} else {
		openai.BaseURLDefault = true
	}
	// Codex gets OpenAI's key from its login (auth.json); codexd uses the
	// login too (package auth, through the core) and falls back to the
	// variable when there is none.
	openai.EnvKey = "OPENAI_API_KEY"
	openai.EnvKeyInstructions = "Sign in with `codex login` (ChatGPT) or `codexd login --with-api-key`, or create an API key at https://platform.openai.com/api-keys and export OPENAI_API_KEY."
	openai.EnvHTTPHeaders = map[string]string{
		"OpenAI-Organization": "OPENAI_ORGANIZATION",
		"OpenAI-Project":      "OPENAI_PROJECT",
	}
	openai.RequiresOpenAIAuth = true

	oss := func(id string, port int) Provider {
		p := defaultProvider(id)
		p.Builtin = id
		p.Name = "gpt-oss"
		if v := strings.TrimSpace(getenv("CODEX_OSS_PORT")); v != "" {
			if n, err := strconv.ParseUint(v, 10, 16); err == nil {
				port = int(n)
			}
		}
		p.BaseURL = fmt.Sprintf("http://localhost:%d/v1", port)
		if v := strings.TrimSpace(getenv("CODEX_OSS_BASE_URL")); v != "" {
			p.BaseURL = v
		}
		return p
	}

	mock := defaultProvider(BuiltinMock)
	mock.Builtin = BuiltinMock
	mock.Name = "codexd mock model"
	mock.BaseURL = ""

	return map[string]Provider{
		BuiltinOpenAI:   openai,
		BuiltinOllama:   oss(BuiltinOllama, 11434),
		BuiltinLMStudio: oss(BuiltinLMStudio, 1234),
		BuiltinMock:     mock,
	}
}

// mergeProviders adds the configured providers to the built-ins. Codex's
// built-ins are not redefinable; "mock" is (see the package doc).
func mergeProviders(builtins map[string]Provider, configured map[string]fileProvider) map[string]Provider {
	out := maps.Clone(builtins)
	for _, id := range slices.Sorted(maps.Keys(configured)) {
		f := configured[id]
		if b, ok := builtins[id]; ok {
			if id != BuiltinMock {
				continue
			}
			f.overlay(&b)
			if f.BaseURL != nil {
				b.Builtin = "" // an external mock server
			}
			out[id] = b
			continue
		}
		p := defaultProvider(id)
		f.overlay(&p)
		out[id] = p
	}
	return out
}
