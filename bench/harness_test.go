package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/codexd/codexd/bench/harness"
)

// TestImplementations checks that every implementation answers an echo, a
// 64 KiB echo and delivers notifications over every transport. It asserts
// behaviour only, never timing.
func TestImplementations(t *testing.T) {
	big := harness.BigParams(64 << 10)
	for _, tr := range harness.Transports() {
		for _, impl := range harness.All() {
			t.Run(name(impl.Name)+"/"+tr.Name, func(t *testing.T) {
				s, err := harness.Start(impl, tr)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx := context.Background()
				if err := harness.EchoCheck(ctx, s.Client, big); err != nil {
					t.Fatalf("64 KiB echo: %v", err)
				}
				base := s.Notes()
				for range 10 {
					if err := s.Client.Notify(ctx, harness.Small); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.WaitNotes(base+10, time.Minute); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestHostileFraming checks that every implementation's server answers (or
// closes on) the duplicate-keys message, and that ours rejects it.
func TestHostileFraming(t *testing.T) {
	var dup harness.Payload
	for _, p := range harness.Payloads() {
		if p.Name == "10k duplicate keys" {
			dup = p
		}
	}
	for _, impl := range harness.All() {
		r := harness.RunHostile(impl, harness.Transports()[0], dup)
		if r.Err != nil {
			t.Errorf("%s: %v", impl.Name, r.Err)
			continue
		}
		t.Logf("%s: %s", impl.Name, r.Outcome)
		if impl.Name == harness.OursName && !r.Rejected {
			t.Errorf("codexd accepted duplicate member names: %s", r.Outcome)
		}
	}
}
