package jsonrpc

import (
	"runtime"
	"testing"
)

func TestFreeListKeepsAtMostMaxAcrossCollections(t *testing.T) {
	f := freeList[int]{max: 2}
	a, b, c := new(int), new(int), new(int)
	f.put(a)
	f.put(b)
	f.put(c) // over max: dropped
	runtime.GC()
	got := map[*int]bool{f.get(): true, f.get(): true}
	if !got[a] || !got[b] {
		t.Fatalf("kept values lost: %v", got)
	}
	if v := f.get(); v == a || v == b || v == c || v == nil {
		t.Fatalf("an empty list must return a fresh value, got %p", v)
	}
}

func TestDecodeParamsRefusesTrailingData(t *testing.T) {
	type P struct{ A int }
	if p, err := DecodeParams[P]([]byte(`{"A":1}`)); err != nil || p.A != 1 {
		t.Fatalf("one value: %+v %v", p, err)
	}
	if _, err := DecodeParams[P]([]byte(`{"A":1} {"A":2}`)); err == nil {
		t.Fatal("a value followed by another was accepted")
	}
	if _, err := DecodeParams[P]([]byte(`{"A":1} x`)); err == nil {
		t.Fatal("a value followed by garbage was accepted")
	}
}
