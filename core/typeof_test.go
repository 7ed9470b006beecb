package core

import "fmt"

func fmtTypeOf(v any) string { return fmt.Sprintf("%T", v) }
