package core

// interceptPatch recognises `apply_patch <<'EOF' ... EOF` sent through the
// shell. (Filled in by the applypatch integration.)
func interceptPatch(argv []string, cwd string) (text, dir string, ok bool) {
	return "", "", false
}

// applyPatch runs apply_patch. (Filled in by the applypatch integration.)
func (tr *turn) applyPatch(callID, text, cwd string) string {
	return "apply_patch is not available"
}

// turnDiff accumulates the files a turn changed.
type turnDiff struct{}

func newTurnDiff() *turnDiff { return &turnDiff{} }
