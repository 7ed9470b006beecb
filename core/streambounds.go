package core

import (
	"fmt"

	"github.com/codexd/codexd/core/prompt"
)

// What a model stream carries is untrusted: a server may send any event,
// in any order, of any size. The core keeps of one response its message
// texts and its finished items, and passes its deltas on; these bound both,
// so that a hostile or broken server fails the turn rather than the
// process.
const (
	// maxResponseBytes bounds the text deltas and finished items kept of
	// one response. A real response is far smaller: its last event,
	// response.completed, repeats all of it, and modelclient takes no
	// event over 16 MiB.
	maxResponseBytes = 64 << 20
	// maxResponseItems bounds the output items of one response.
	maxResponseItems = 1024
	// maxReasoningParts bounds a reasoning delta's summary or content
	// index; a delta outside [0, maxReasoningParts) is dropped (a front-end
	// keeps one slot per index).
	maxReasoningParts = 1024
)

// errResponseTooLarge and errTooManyItems fail the turn; a retry would
// get the same.
func errResponseTooLarge() error {
	return &prompt.Error{Info: "other",
		Message: fmt.Sprintf("the model's response is over %d MiB; the turn was stopped", maxResponseBytes>>20)}
}

func errTooManyItems() error {
	return &prompt.Error{Info: "other",
		Message: fmt.Sprintf("the model's response has over %d output items; the turn was stopped", maxResponseItems)}
}

// partIndex reports whether a reasoning part index is one the core passes
// on.
func partIndex(i int) bool { return i >= 0 && i < maxReasoningParts }

// itemBytes is what an item of a response costs to keep, roughly: its
// strings.
func itemBytes(it *prompt.Item) int {
	n := len(it.ID) + len(it.Role) + len(it.Phase) + len(it.Name) + len(it.Arguments) + len(it.Input) + len(it.CallID) + len(it.Status)
	for _, c := range it.Content {
		n += len(c.Type) + len(c.Text) + len(c.ImageURL)
	}
	for _, s := range it.Summary {
		n += len(s.Type) + len(s.Text)
	}
	if it.EncryptedContent != nil {
		n += len(*it.EncryptedContent)
	}
	if it.Output != nil {
		n += len(*it.Output)
	}
	return n
}
