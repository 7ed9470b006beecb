package config

import (
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary TOML and one -c override to Parse: it must
// never panic, and every failure must be an *Error.
func FuzzParse(f *testing.F) {
	f.Add([]byte("model = \"m\"\n"), "model_provider=mock")
	f.Fuzz(func(t *testing.T, data []byte, override string) {
		var overrides []string
		if override != "" {
			overrides = []string{override}
		}
		cfg, err := Parse(data, "fuzz.toml", LoadOptions{Overrides: overrides, Getenv: env(nil)})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is a %T, not *Error", err, err)
			}
			return
		}
		if _, ok := cfg.Providers[cfg.ModelProvider]; !ok || cfg.Provider.ID != cfg.ModelProvider {
			t.Fatalf("provider %q not resolved: %+v", cfg.ModelProvider, cfg.Provider)
		}
		if err := cfg.ShellEnvironment.Validate(); err != nil {
			t.Fatalf("shell_environment_policy: %v", err)
		}
		if cfg.Provider.RequestMaxRetries > 100 || cfg.Provider.StreamMaxRetries > 100 || cfg.Provider.StreamIdleTimeout < 0 {
			t.Fatalf("limits: %+v", cfg.Provider)
		}
	})
}
