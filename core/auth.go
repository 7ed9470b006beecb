package core

import (
	"context"
	"errors"

	"github.com/codexd/codexd/auth"
	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/modelclient"
)

// ChatGPTCodexBaseURL is where Codex sends the OpenAI provider's requests
// for a ChatGPT sign-in when openai_base_url does not say otherwise.
const ChatGPTCodexBaseURL = "https://chatgpt.com/backend-api/codex"

// signIn adapts the stored sign-in (auth.json) to modelclient.
type signIn struct{ m *auth.Manager }

func (s signIn) Credentials(ctx context.Context) (modelclient.Credential, bool, error) {
	c, err := s.m.Credentials(ctx)
	if errors.Is(err, auth.ErrNotSignedIn) {
		return modelclient.Credential{}, false, nil
	}
	if err != nil {
		return modelclient.Credential{}, false, err
	}
	return modelclient.Credential{Bearer: c.Bearer, AccountID: c.AccountID}, true, nil
}

func (s signIn) Unauthorized(ctx context.Context, stale modelclient.Credential) (modelclient.Credential, error) {
	c, err := s.m.RefreshAfterUnauthorized(ctx, auth.Credentials{Bearer: stale.Bearer, AccountID: stale.AccountID})
	if err != nil {
		return modelclient.Credential{}, err
	}
	return modelclient.Credential{Bearer: c.Bearer, AccountID: c.AccountID}, nil
}

// providerFor is p as a request goes to it now: the built-in OpenAI
// provider of a ChatGPT sign-in goes to the ChatGPT backend (chatGPTBase)
// unless openai_base_url named another URL, as Codex does. The mode is
// read for each request, so a login or logout applies to the next one.
func providerFor(p config.Provider, m *auth.Manager, chatGPTBase string) config.Provider {
	if m == nil || !p.RequiresOpenAIAuth || !p.BaseURLDefault {
		return p
	}
	if m.Mode() == auth.ModeChatGPT {
		if chatGPTBase == "" {
			chatGPTBase = ChatGPTCodexBaseURL
		}
		p.BaseURL = chatGPTBase
	}
	return p
}
