package procstat

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if kb := RSSKB(os.Getpid()); kb <= 0 {
		t.Errorf("RSSKB(self) = %d", kb)
	}
	if _, err := StatusKB(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("a missing field was found")
	}
	if la := Loadavg(); len(strings.Fields(la)) != 3 {
		t.Errorf("Loadavg = %q", la)
	}
}
