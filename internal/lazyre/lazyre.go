// Package lazyre holds regular expressions compiled on first use.
//
// A package-level regexp.MustCompile runs in the package's init at every
// start of the binary, whether or not the expression is ever used, and
// that init's code and data are paged in with it. A Regexp written as a
// composite literal is initialised statically and compiles only when Get
// is first called. It is for fixed, known-good expressions only (a bad one
// panics on first use, as MustCompile would at init); it must never hold
// an expression built from input.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is Expr, compiled on the first Get. Declare it as a package-level
// composite literal (var re = lazyre.Regexp{Expr: `...`}) and never copy it.
type Regexp struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression, compiling it on the first call; it
// is safe for concurrent use.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}
