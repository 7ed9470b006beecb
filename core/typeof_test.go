package core

import (
	"fmt"
	"os"
)

func fmtTypeOf(v any) string { return fmt.Sprintf("%T", v) }

func mkdirAll(p string) error { return os.MkdirAll(p, 0o755) }
