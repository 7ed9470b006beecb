package lazyre

import (
	"sync"
	"testing"
)

func TestGetCompilesOnceAndMatches(t *testing.T) {
	re := &Regexp{Expr: `id (\d+)`}
	if re.re != nil {
		t.Fatal("compiled before the first Get")
	}
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if m := re.Get().FindStringSubmatch("session id 42"); m != nil {
				got[i] = m[1]
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != "42" {
			t.Fatalf("Get #%d matched %q, want 42", i, g)
		}
	}
	if re.Get() != re.Get() {
		t.Fatal("Get compiled again")
	}
}

func TestBadExpressionPanicsOnFirstUse(t *testing.T) {
	re := &Regexp{Expr: `(`}
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic")
		}
	}()
	re.Get()
}
