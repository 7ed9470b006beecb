package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Codex's OAuth client and token endpoint.
const (
	ClientID = "app_EMoamEEZ73f0CkXaXp7hrann"
	// DefaultTokenURL is where refreshes go;
	// CODEX_REFRESH_TOKEN_URL_OVERRIDE replaces it.
	DefaultTokenURL = "https://auth.openai.com/oauth/token"
	// TokenURLOverrideEnv names Codex's override of DefaultTokenURL.
	TokenURLOverrideEnv = "CODEX_REFRESH_TOKEN_URL_OVERRIDE"
	// refreshInterval: a token without exp is refreshed after this long,
	// as Codex's TOKEN_REFRESH_INTERVAL (8 days).
	refreshInterval = 8 * 24 * time.Hour
)

// Refresh reasons, sent as refresh_reason.
const (
	ReasonProactiveExpiry = "proactive_expiry"
	ReasonUnauthorized    = "unauthorized"
)

// Credentials are what a request to the model carries.
type Credentials struct {
	Mode Mode
	// Bearer is the API key or the access token.
	Bearer string
	// AccountID is the ChatGPT account (header ChatGPT-Account-ID); empty
	// in API-key mode.
	AccountID string
}

// SignInError is a refresh the token endpoint refused: the stored sign-in
// is no longer valid and the user must sign in again.
type SignInError struct {
	// Reason is the endpoint's code (refresh_token_expired,
	// refresh_token_reused, refresh_token_invalidated) or "".
	Reason string
	msg    string
}

func (e *SignInError) Error() string { return e.msg }

// signInMessage is Codex's message for a refresh refused with code (a
// switch, not a map: a map literal would be built at every start).
func signInMessage(code string) string {
	switch code {
	case "refresh_token_expired":
		return "Your access token could not be refreshed because your refresh token has expired. Please log out and sign in again."
	case "refresh_token_reused":
		return "Your access token could not be refreshed because your refresh token was already used. Please log out and sign in again."
	case "refresh_token_invalidated":
		return "Your access token could not be refreshed because your refresh token was revoked. Please log out and sign in again."
	}
	return "Your access token could not be refreshed. Please log out and sign in again."
}

// ErrNotSignedIn: auth.json is missing or signs in with nothing.
var ErrNotSignedIn = errors.New("not signed in")

// Options tune a Manager.
type Options struct {
	// HTTPClient sends refreshes; nil means http.DefaultClient's settings.
	HTTPClient *http.Client
	// Getenv reads CODEX_REFRESH_TOKEN_URL_OVERRIDE; nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// UserAgent of the refresh request; default "codexd".
	UserAgent  string
	Originator string
}

// Manager hands out the credentials of one CODEX_HOME's auth.json,
// refreshing ChatGPT tokens when they are due. It reads the file on each
// call, so a sign-in or refresh by Codex (or another codexd) is seen at
// once. It is safe for concurrent use; refreshes are one at a time.
type Manager struct {
	home string
	opts Options
	mu   sync.Mutex // held across a refresh
}

// NewManager returns the manager of home's auth.json.
func NewManager(home string, opts Options) *Manager {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "codexd"
	}
	return &Manager{home: home, opts: opts}
}

// Home is the CODEX_HOME the manager reads.
func (m *Manager) Home() string { return m.home }

// Mode is the stored sign-in's mode; "" when there is none (or the file
// cannot be read).
func (m *Manager) Mode() Mode {
	f, err := Read(m.home)
	if err != nil {
		return ""
	}
	return f.EffectiveMode()
}

// Account describes the stored sign-in for account/read.
type Account struct {
	Mode Mode
	// Email, PlanType (the app-server's PlanType) and UserID are the
	// ChatGPT account's, from the id token.
	Email, PlanType, UserID, AccountID string
}

// Account reads the stored sign-in; ErrNotSignedIn when there is none.
func (m *Manager) Account() (Account, error) {
	f, err := Read(m.home)
	if err != nil {
		return Account{}, err
	}
	switch f.EffectiveMode() {
	case ModeAPIKey:
		return Account{Mode: ModeAPIKey}, nil
	case ModeChatGPT:
		a := Account{Mode: ModeChatGPT, PlanType: "unknown"}
		if c, err := ParseClaims(f.Tokens.IDToken); err == nil {
			a.Email, a.UserID, a.AccountID = c.Email, c.UserID, c.AccountID
			if c.PlanType != "" {
				a.PlanType = Plan(c.PlanType)
			}
		}
		if f.Tokens.AccountID != nil && *f.Tokens.AccountID != "" {
			a.AccountID = *f.Tokens.AccountID
		}
		return a, nil
	}
	return Account{}, ErrNotSignedIn
}

// Credentials returns the stored sign-in's credentials, refreshing a
// ChatGPT access token first when it is due. Errors: ErrNotSignedIn, a
// *SignInError when the refresh was refused, another error when the
// token endpoint could not be reached (worth a retry later).
func (m *Manager) Credentials(ctx context.Context) (Credentials, error) {
	f, err := Read(m.home)
	if err != nil {
		return Credentials{}, err
	}
	switch f.EffectiveMode() {
	case ModeAPIKey:
		return Credentials{Mode: ModeAPIKey, Bearer: f.OpenAIAPIKey}, nil
	case ModeChatGPT:
		if m.due(f) {
			if f, err = m.refresh(ctx, f, ReasonProactiveExpiry); err != nil {
				return Credentials{}, err
			}
		}
		return chatGPTCredentials(f), nil
	}
	return Credentials{}, ErrNotSignedIn
}

// RefreshAfterUnauthorized refreshes the ChatGPT tokens after the backend
// answered 401 to stale, the credentials sent; when the stored tokens
// changed meanwhile (someone else refreshed) they are returned as they
// are. In API-key mode it returns ErrNotSignedIn's sibling: the key is
// what it is, and the caller reports the 401.
func (m *Manager) RefreshAfterUnauthorized(ctx context.Context, stale Credentials) (Credentials, error) {
	f, err := Read(m.home)
	if err != nil {
		return Credentials{}, err
	}
	if f.EffectiveMode() != ModeChatGPT {
		return Credentials{}, errors.New("the API key was refused (401)")
	}
	if f.Tokens.AccessToken != stale.Bearer {
		return chatGPTCredentials(f), nil
	}
	if f, err = m.refresh(ctx, f, ReasonUnauthorized); err != nil {
		return Credentials{}, err
	}
	return chatGPTCredentials(f), nil
}

func chatGPTCredentials(f *File) Credentials {
	c := Credentials{Mode: ModeChatGPT, Bearer: f.Tokens.AccessToken}
	if f.Tokens.AccountID != nil {
		c.AccountID = *f.Tokens.AccountID
	}
	if c.AccountID == "" {
		if cl, err := ParseClaims(f.Tokens.IDToken); err == nil {
			c.AccountID = cl.AccountID
		}
	}
	return c
}

// due says whether the access token needs a refresh before use.
func (m *Manager) due(f *File) bool {
	now := m.opts.Now()
	if f.Tokens.AccessToken == "" {
		return true
	}
	if exp, ok := expiry(f.Tokens.AccessToken); ok {
		return !exp.After(now)
	}
	return f.LastRefresh != nil && f.LastRefresh.Before(now.Add(-refreshInterval))
}

// refresh exchanges f's refresh token for new tokens and writes them
// back. Under the lock it reads the file again: when another process has
// refreshed meanwhile, its tokens are used and nothing is sent.
func (m *Manager) refresh(ctx context.Context, seen *File, reason string) (*File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := Read(m.home)
	if err != nil {
		return nil, err
	}
	if f.EffectiveMode() != ModeChatGPT {
		return nil, &SignInError{msg: "Your access token could not be refreshed because you have since logged out or signed in to another account. Please sign in again."}
	}
	if f.Tokens.AccessToken != seen.Tokens.AccessToken || f.Tokens.RefreshToken != seen.Tokens.RefreshToken {
		return f, nil
	}
	if f.Tokens.RefreshToken == "" {
		return nil, &SignInError{msg: "Your access token could not be refreshed because there is no refresh token. Please sign in again."}
	}
	res, err := m.requestRefresh(ctx, f.Tokens.RefreshToken, reason)
	if err != nil {
		return nil, err
	}
	if res.IDToken != nil {
		if _, err := ParseClaims(*res.IDToken); err != nil {
			return nil, fmt.Errorf("token refresh: the new id token is not a JWT")
		}
		f.Tokens.IDToken = *res.IDToken
	}
	if res.AccessToken != nil {
		f.Tokens.AccessToken = *res.AccessToken
	}
	if res.RefreshToken != nil {
		f.Tokens.RefreshToken = *res.RefreshToken
	}
	now := m.opts.Now().UTC()
	f.LastRefresh = &now
	if err := Write(m.home, f); err != nil {
		return nil, fmt.Errorf("token refresh: writing %s: %w", FileName, err)
	}
	return f, nil
}

type refreshResponse struct {
	IDToken      *string `json:"id_token"`
	AccessToken  *string `json:"access_token"`
	RefreshToken *string `json:"refresh_token"`
}

func (m *Manager) tokenURL() string {
	if u := strings.TrimSpace(m.opts.Getenv(TokenURLOverrideEnv)); u != "" {
		return u
	}
	return DefaultTokenURL
}

func (m *Manager) requestRefresh(ctx context.Context, refreshToken, reason string) (*refreshResponse, error) {
	body, _ := json.Marshal(map[string]string{
		"client_id": ClientID, "grant_type": "refresh_token",
		"refresh_reason": reason, "refresh_token": refreshToken,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.tokenURL(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("token refresh: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", m.opts.UserAgent)
	if m.opts.Originator != "" {
		req.Header.Set("Originator", m.opts.Originator)
	}
	res, err := m.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token refresh: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxFileBytes))
	if err != nil {
		return nil, fmt.Errorf("token refresh: reading the answer: %w", err)
	}
	if res.StatusCode == http.StatusUnauthorized {
		code := refreshErrorCode(data)
		return nil, &SignInError{Reason: code, msg: signInMessage(code)}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, fmt.Errorf("token refresh failed: %s", res.Status)
	}
	var out refreshResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("token refresh: the answer is not JSON: %w", err)
	}
	return &out, nil
}

// refreshErrorCode finds the code in the token endpoint's error answer:
// {"error": "code"}, {"error": {"code": "code"}} or {"code": "code"},
// lower-cased; "" for any other answer.
func refreshErrorCode(body []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
		Code  *string         `json:"code"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(v.Error, &s) == nil && s != "" {
		return strings.ToLower(s)
	}
	var o struct {
		Code *string `json:"code"`
	}
	if json.Unmarshal(v.Error, &o) == nil && o.Code != nil {
		return strings.ToLower(*o.Code)
	}
	if v.Code != nil {
		return strings.ToLower(*v.Code)
	}
	return ""
}
