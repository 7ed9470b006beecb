package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/codexd/codexd/auth"
	"io"
	"net/http"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/modelclient"
)

// ProviderFromConfig makes the Provider of a configured model provider,
// backed by modelclient. A provider whose client cannot be made carries the
// error, which fails its turns (the core itself still starts).
func ProviderFromConfig(p config.Provider, opts modelclient.Options) *Provider {
	return providerFromConfig(p, opts, nil, "")
}

// providerFromConfig is ProviderFromConfig with the stored sign-in, which
// signs the requests of a provider that RequiresOpenAIAuth (nil: none).
func providerFromConfig(p config.Provider, opts modelclient.Options, signedIn *auth.Manager, chatGPTBase string) *Provider {
	out := &Provider{Name: p.ID, RequestMaxRetries: p.RequestMaxRetries, StreamMaxRetries: p.StreamMaxRetries}
	if signedIn != nil {
		opts.Auth = signIn{signedIn}
	}
	if _, err := modelclient.New(p, opts); err != nil {
		out.Err = &prompt.Error{Message: err.Error(), Info: "other", Err: err}
		return out
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	out.Client = &modelClient{provider: p, opts: opts, auth: signedIn, chatGPTBase: chatGPTBase}
	return out
}

// modelClient adapts modelclient to prompt.Client. A modelclient.Client
// reports retries through an option, so each request gets its own (they
// share the HTTP client and its connections).
type modelClient struct {
	provider    config.Provider
	opts        modelclient.Options
	auth        *auth.Manager
	chatGPTBase string
}

func (m *modelClient) Stream(ctx context.Context, req *prompt.Request, onRetry func(prompt.Event)) (prompt.Stream, error) {
	opts := m.opts
	opts.OnRetry = func(r modelclient.Retry) {
		onRetry(prompt.Event{Kind: prompt.Retrying, Attempt: r.Attempt, Delay: r.Delay, Err: modelError(r.Err)})
	}
	c, err := modelclient.New(providerFor(m.provider, m.auth, m.chatGPTBase), opts)
	if err != nil {
		return nil, modelError(err)
	}
	s, err := c.Stream(ctx, toModelRequest(req))
	if err != nil {
		return nil, modelError(err)
	}
	return &modelStream{s: s}, nil
}

func toModelRequest(r *prompt.Request) modelclient.Request {
	out := modelclient.Request{
		Model: r.Model, Instructions: r.Instructions, Tools: r.Tools, ToolChoice: r.ToolChoice,
		ParallelToolCalls: r.ParallelToolCalls, Store: r.Store, Include: r.Include, OmitTools: r.OmitTools,
		ServiceTier: r.ServiceTier, PromptCacheKey: r.PromptCacheKey, ClientMetadata: r.ClientMetadata,
		Header: http.Header{},
	}
	if r.Reasoning != nil {
		out.Reasoning = &modelclient.Reasoning{Effort: r.Reasoning.Effort, Summary: r.Reasoning.Summary, Context: r.Reasoning.Context}
	}
	if r.Text != nil {
		out.Verbosity = r.Text.Verbosity
		if r.Text.Format != nil {
			out.OutputSchema = r.Text.Format.Schema
		}
	}
	for k, v := range r.Headers {
		out.Header.Set(k, v)
	}
	if r.Originator != "" {
		out.Header.Set("Originator", r.Originator)
	}
	if r.ThreadID != "" {
		out.Header.Set("Session-Id", r.ThreadID)
		out.Header.Set("Thread-Id", r.ThreadID)
	}
	if r.TurnID != "" && out.Header.Get("X-Codex-Turn-Metadata") == "" {
		out.Header.Set("X-Codex-Turn-Metadata", fmt.Sprintf(`{"turn_id":%q}`, r.TurnID))
	}
	out.Input = make([]modelclient.Item, len(r.Input))
	for i, it := range r.Input {
		out.Input[i] = toModelItem(it)
	}
	return out
}

func parts(cs []prompt.Content) []modelclient.ContentPart {
	out := make([]modelclient.ContentPart, len(cs))
	for i, c := range cs {
		out[i] = modelclient.ContentPart{Type: c.Type, Text: c.Text, ImageURL: c.ImageURL, Detail: c.Detail}
	}
	return out
}

func toModelItem(it prompt.Item) modelclient.Item {
	m := modelclient.Item{
		Type: it.Type, ID: it.ID, Status: it.Status, Role: it.Role, Content: parts(it.Content), Phase: it.Phase,
		CallID: it.CallID, Name: it.Name, Namespace: it.Namespace, Arguments: it.Arguments, Input: it.Input, Raw: it.Raw,
	}
	if it.Type == prompt.TypeAdditionalTools {
		// modelclient sends an item of a type it does not know as its JSON.
		m.Raw, _ = json.Marshal(it)
	}
	if it.Output != nil {
		m.Output = *it.Output
	}
	if it.OutputContent != nil {
		m.OutputContent = parts(it.OutputContent)
	}
	for _, s := range it.Summary {
		m.Summary = append(m.Summary, modelclient.ContentPart{Type: s.Type, Text: s.Text})
	}
	if it.EncryptedContent != nil {
		m.EncryptedContent = *it.EncryptedContent
	}
	return m
}

func fromModelItem(m modelclient.Item) *prompt.Item {
	it := &prompt.Item{
		Type: m.Type, ID: m.ID, Role: m.Role, Phase: m.Phase, CallID: m.CallID, Name: m.Name, Namespace: m.Namespace,
		Arguments: m.Arguments, Input: m.Input, Status: m.Status,
	}
	switch m.Type {
	case prompt.TypeMessage, prompt.TypeReasoning, prompt.TypeFunctionCall, prompt.TypeFunctionCallOutput,
		prompt.TypeCustomToolCall, prompt.TypeCustomToolCallOutput:
	default:
		// Kept whole, to be sent back as it came (web_search_call...).
		it.Raw = m.Raw
	}
	for _, c := range m.Content {
		it.Content = append(it.Content, prompt.Content{Type: c.Type, Text: c.Text, ImageURL: c.ImageURL, Detail: c.Detail})
	}
	for _, s := range m.Summary {
		it.Summary = append(it.Summary, prompt.Summary{Type: s.Type, Text: s.Text})
	}
	if m.EncryptedContent != "" {
		e := m.EncryptedContent
		it.EncryptedContent = &e
	}
	if m.Type == prompt.TypeFunctionCallOutput || m.Type == prompt.TypeCustomToolCallOutput {
		o := m.Output
		it.Output = &o
	}
	return it
}

type modelStream struct{ s *modelclient.Stream }

func (m *modelStream) Close() error { return m.s.Close() }

func (m *modelStream) Next() (prompt.Event, error) {
	for {
		ev, err := m.s.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return prompt.Event{}, io.EOF
			}
			return prompt.Event{}, modelError(err)
		}
		switch e := ev.(type) {
		case modelclient.Created:
			return prompt.Event{Kind: prompt.Created, ResponseID: e.ResponseID}, nil
		case modelclient.OutputItemAdded:
			return prompt.Event{Kind: prompt.ItemAdded, Item: fromModelItem(e.Item)}, nil
		case modelclient.OutputItemDone:
			return prompt.Event{Kind: prompt.ItemDone, Item: fromModelItem(e.Item)}, nil
		case modelclient.OutputTextDelta:
			return prompt.Event{Kind: prompt.TextDelta, ItemID: e.ItemID, Delta: e.Delta, ContentIndex: e.ContentIndex}, nil
		case modelclient.FunctionCallArgumentsDelta:
			return prompt.Event{Kind: prompt.ArgumentsDelta, ItemID: e.ItemID, Delta: e.Delta}, nil
		case modelclient.ReasoningSummaryPartAdded:
			return prompt.Event{Kind: prompt.ReasoningSummaryPartAdded, ItemID: e.ItemID, SummaryIndex: e.SummaryIndex}, nil
		case modelclient.ReasoningSummaryTextDelta:
			return prompt.Event{Kind: prompt.ReasoningSummaryDelta, ItemID: e.ItemID, SummaryIndex: e.SummaryIndex, Delta: e.Delta}, nil
		case modelclient.ReasoningTextDelta:
			return prompt.Event{Kind: prompt.ReasoningTextDelta, ItemID: e.ItemID, ContentIndex: e.ContentIndex, Delta: e.Delta}, nil
		case modelclient.Completed:
			ev := prompt.Event{Kind: prompt.Completed, ResponseID: e.ResponseID}
			if u := e.Usage; u != nil {
				ev.Usage = &prompt.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
					OutputTokens: u.OutputTokens, ReasoningOutputTokens: u.ReasoningOutputTokens, TotalTokens: u.TotalTokens}
			}
			return ev, nil
		}
		// Other events (custom tool input deltas) show nothing.
	}
}

// highDemand is what Codex tells the user about a 5xx answer.
const highDemand = "We’re currently experiencing high demand, which may cause temporary errors."

// modelError classifies a modelclient error with Codex's names.
func modelError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ae0 *modelclient.AuthError
	if errors.As(err, &ae0) {
		// The stored sign-in is no longer valid (or could not be
		// refreshed): the message says what to do.
		return &prompt.Error{Message: ae0.Error(), Info: "unauthorized", Err: err}
	}
	var mk *modelclient.MissingKeyError
	if errors.As(err, &mk) {
		return &prompt.Error{Message: mk.Error(), Info: "unauthorized", Err: errors.Join(prompt.ErrMissingAPIKey, err)}
	}
	if errors.Is(err, modelclient.ErrEventTooLarge) {
		// Not a cut stream: the same response would come again.
		return &prompt.Error{Message: err.Error(), Info: "other", Err: err}
	}
	if errors.Is(err, modelclient.ErrStreamIdle) || errors.Is(err, modelclient.ErrStreamCut) {
		return &prompt.Error{Message: err.Error(), Info: "responseStreamDisconnected", Stream: true, Err: err}
	}
	var ae *modelclient.APIError
	if errors.As(err, &ae) {
		pe := &prompt.Error{Message: ae.Error(), HTTPStatus: ae.StatusCode, Err: err}
		switch {
		case ae.StatusCode >= 500:
			pe.Message, pe.Info = highDemand, "internalServerError"
		case ae.StatusCode == http.StatusUnauthorized:
			pe.Info = "unauthorized"
		case ae.StatusCode == http.StatusTooManyRequests:
			pe.Info = "responseTooManyFailedAttempts"
		case ae.StatusCode == http.StatusBadRequest:
			pe.Info = "badRequest"
		default:
			pe.Info = "other"
		}
		return pe
	}
	var re *modelclient.ResponseError
	if errors.As(err, &re) {
		pe := &prompt.Error{Message: re.Error(), Info: "other", Err: err, Stream: re.Retryable()}
		switch re.Code {
		case "context_length_exceeded":
			pe.Info = "contextWindowExceeded"
		case "insufficient_quota", "usage_limit_reached":
			pe.Info = "usageLimitExceeded"
		case "server_error":
			pe.Info = "internalServerError"
		}
		return pe
	}
	return &prompt.Error{Message: err.Error(), Info: "httpConnectionFailed", Err: err}
}
