package imageinput

import "runtime"

// testingMem measures the bytes allocated between start and allocated.
type testingMem struct{ before uint64 }

func (m *testingMem) start() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.before = s.TotalAlloc
}

func (m *testingMem) allocated() uint64 {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.TotalAlloc - m.before
}
