package core

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/core/tools"
	"github.com/codexd/codexd/imageinput"
)

// The view_image tool, as Codex 0.169 runs it: the file (a relative path
// from the turn's cwd) is read through the thread's environment and
// prepared as a user's image is (images.go); the output is a list holding
// the one image, at the detail the model takes. A file that cannot be read
// or is no image is answered with a text saying so, and shows no item.
// An image that cannot be prepared, whatever the reason (its pixels past
// the decoding budget too), is answered with Codex 0.169's one text for
// it: Codex has no other (side by side, it answers so for a 60000×60000
// header and for a whole 12000×12000 PNG).
const (
	viewImageNotFound  = "unable to locate image at `%s`: %s"
	viewImageBadImage  = "unable to process image: invalid or unsupported image data"
	viewImageArgsError = "failed to parse function arguments: %v"
	viewImageNotAFile  = "image path `%s` is not a file"
)

func (tr *turn) viewImage(call prompt.Item) prompt.Item {
	a, err := tools.ParseViewImageArgs(call.Arguments)
	if err != nil {
		return toolOutput(call, fmt.Sprintf(viewImageArgsError, err))
	}
	path := a.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(tr.settings.Cwd, path)
	}
	prep := tr.imagePrep()
	data, err := prep.read(path)
	if errors.Is(err, errNotAFile) {
		return toolOutput(call, fmt.Sprintf(viewImageNotAFile, path))
	}
	if errors.Is(err, imageinput.ErrTooLarge) {
		return toolOutput(call, viewImageBadImage) // a file past the input limit is not read
	}
	if err != nil {
		return toolOutput(call, fmt.Sprintf(viewImageNotFound, path, readErrorText(err)))
	}
	part := prep.prepare(data, "")
	if part.Type != "input_image" {
		return toolOutput(call, viewImageBadImage)
	}
	item := &agent.ImageView{ID: call.CallID, Path: path}
	tr.emit(agent.ItemStarted{Item: item})
	tr.emit(agent.ItemCompleted{Item: item})
	out := toolOutput(call, "")
	out.Output, out.OutputContent = nil, []prompt.Content{part}
	return out
}
