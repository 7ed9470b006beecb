package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Claims are what Codex reads of a ChatGPT id token.
type Claims struct {
	Email     string
	PlanType  string
	UserID    string
	AccountID string
}

// maxJWTBytes bounds a token this package decodes.
const maxJWTBytes = 64 << 10

// errJWT is any token that is not three non-empty dot-separated parts
// with a base64url JSON payload.
var errJWT = errors.New("invalid JWT")

func jwtPayload(tok string, dst any) error {
	if len(tok) > maxJWTBytes {
		return errJWT
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return errJWT
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return errJWT
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return errJWT
	}
	return nil
}

// ParseClaims reads the id token's email (top level, else the profile
// claim) and its https://api.openai.com/auth claims.
func ParseClaims(idToken string) (Claims, error) {
	var c struct {
		Email   *string `json:"email"`
		Profile *struct {
			Email *string `json:"email"`
		} `json:"https://api.openai.com/profile"`
		Auth *struct {
			PlanType      *string `json:"chatgpt_plan_type"`
			ChatGPTUserID *string `json:"chatgpt_user_id"`
			UserID        *string `json:"user_id"`
			AccountID     *string `json:"chatgpt_account_id"`
		} `json:"https://api.openai.com/auth"`
	}
	if err := jwtPayload(idToken, &c); err != nil {
		return Claims{}, err
	}
	var out Claims
	switch {
	case c.Email != nil:
		out.Email = *c.Email
	case c.Profile != nil && c.Profile.Email != nil:
		out.Email = *c.Profile.Email
	}
	if a := c.Auth; a != nil {
		out.PlanType = deref(a.PlanType)
		out.UserID = deref(a.ChatGPTUserID)
		if out.UserID == "" {
			out.UserID = deref(a.UserID)
		}
		out.AccountID = deref(a.AccountID)
	}
	return out, nil
}

// expiry is the token's exp claim; ok is false when it has none or is
// not a JWT (an opaque token is used until the backend refuses it).
func expiry(tok string) (time.Time, bool) {
	var c struct {
		Exp *json.Number `json:"exp"`
	}
	if jwtPayload(tok, &c) != nil || c.Exp == nil {
		return time.Time{}, false
	}
	n, err := c.Exp.Int64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Plan maps a raw chatgpt_plan_type to the app-server's PlanType: the
// names of its schema (any case; "hc" is enterprise and "education" edu,
// as in Codex), else "unknown".
func Plan(raw string) string {
	switch p := strings.ToLower(raw); p {
	case "free", "go", "plus", "pro", "prolite", "promax", "team", "self_serve_business_prolite",
		"self_serve_business_usage_based", "business", "ent26", "enterprise_cbp_automation",
		"enterprise_cbp_usage_based", "enterprise", "edu", "edu_plus", "edu_pro", "sci", "sci_plus":
		return p
	case "hc":
		return "enterprise"
	case "education":
		return "edu"
	}
	return "unknown"
}
