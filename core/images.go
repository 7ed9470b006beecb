package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/codexd/codexd/agent"
	"github.com/codexd/codexd/core/prompt"
	"github.com/codexd/codexd/imageinput"
)

// Images in the model's input, as Codex 0.169 sends them. A local image
// becomes three parts of the user message: an open tag naming it
// ([Image #N], N its place among the message's images, and the path as
// the user gave it), the image as a data URL, and a close tag. An image
// URL input is sent as an image alone. Every data URL is prepared to the
// model's limits (imageinput): at original detail for a model that takes
// it, else at the detail asked for, high by default. What cannot be
// prepared is replaced by a short text saying so, and the turn goes on, as
// in Codex (it is not an error: the user sees their message and the model
// is told). A local file that cannot be read at all is refused before the
// turn by CheckInput (imagecheck.go); one that goes between that check and
// the turn's read is replaced the same way.
const (
	localImageOpen = "<image name=[Image #%d] path=%q>"
	imageClose     = "</image>"
)

// The texts that replace an image the model cannot be sent: Codex
// 0.169's placeholders, word for word (they are fixed texts the model is
// trained to read, and TestRequestDifferential compares them with
// Codex's). An image whose bytes are past the input limit "exceeded the
// supported size limit"; one whose pixels are past the decoding budget,
// or that does not decode, "could not be processed", as Codex reports an
// image its decoder refuses. The text for a file that cannot be read is
// codexd's words for Codex's facts.
const (
	imageUnreadableText  = "codexd could not read the local image at `%s`: %s"
	imageUnusableText    = "image content omitted because it could not be processed"
	imageTooLargeText    = "image content omitted because it exceeded the supported size limit; use a smaller image"
	imageRemoteText      = "image content omitted because remote image URLs are not supported"
	imageLowDetailText   = "image content omitted because detail 'low' is not supported; use 'high', 'original', or 'auto'"
	detailHigh           = "high"
	detailOriginal       = "original"
	imageDetailLow       = "low"
	imageReadPathUnknown = "No such file or directory (os error 2)" // an empty path, as Codex reads it
)

// imagePrep is what converting a message's images needs: whether the
// model takes original detail, the cwd a relative path is taken from, and
// how to read a file (through the thread's environment).
type imagePrep struct {
	original bool
	cwd      string
	read     func(path string) ([]byte, error)
}

// imagePrep reads through the turn's exec-server.
func (tr *turn) imagePrep() imagePrep {
	info := tr.t.core.modelInfo(tr.settings.Model)
	return imagePrep{
		// A Responses Lite model takes every image at original detail too
		// (and is sent no detail: withoutImageDetail).
		original: info.SupportsImageDetailOriginal || info.UseResponsesLite,
		cwd:      tr.settings.Cwd,
		read:     func(path string) ([]byte, error) { return readImageFile(tr.ctx, tr.t.core, path) },
	}
}

// errNotAFile: an image path names a directory (in the words of the
// exec-server's errors, which are Codex's).
var errNotAFile = errors.New("Is a directory (os error 21)")

// readImageFile reads path on the exec-server's machine, refusing a
// directory or a file past imageinput.MaxInputBytes before reading it.
func readImageFile(ctx context.Context, c *Core, path string) ([]byte, error) {
	ec, err := c.exec(ctx)
	if err != nil {
		return nil, err
	}
	st, err := ec.Stat(ctx, path, true)
	if err != nil {
		return nil, err
	}
	if st.IsDirectory {
		return nil, errNotAFile
	}
	if st.Size > imageinput.MaxInputBytes {
		return nil, errImageFileTooLarge(st.Size)
	}
	return ec.ReadFile(ctx, path)
}

// errImageFileTooLarge: a file of size bytes is past imageinput's input
// limit, and is not read.
func errImageFileTooLarge(size uint64) error {
	return fmt.Errorf("%w: the file has %d bytes, more than the %d an image may have", imageinput.ErrTooLarge, size, imageinput.MaxInputBytes)
}

// localImageParts are a localImage input's parts, the nth image of its
// message.
func (p imagePrep) localImageParts(in agent.Input, n int) []prompt.Content {
	path := imagePath(p.cwd, in.Path)
	var data []byte
	err := errors.New(imageReadPathUnknown)
	if path != "" && p.read != nil {
		data, err = p.read(path)
	}
	part := prompt.Content{Type: "input_text", Text: imageTooLargeText}
	switch {
	case errors.Is(err, imageinput.ErrTooLarge):
		// Readable, but past the limit: the image's place says so, as
		// Codex says of an image it will not send for its size.
	case err != nil:
		return []prompt.Content{{Type: "input_text", Text: fmt.Sprintf(imageUnreadableText, in.Path, readErrorText(err))}}
	default:
		part = p.prepare(data, in.Detail)
	}
	return []prompt.Content{
		{Type: "input_text", Text: fmt.Sprintf(localImageOpen, n, in.Path)},
		part,
		{Type: "input_text", Text: imageClose},
	}
}

// imagePath is the path a localImage input's file is read at: a relative
// path taken from cwd.
func imagePath(cwd, path string) string {
	if path != "" && !filepath.IsAbs(path) && cwd != "" {
		return filepath.Join(cwd, path)
	}
	return path
}

// imageURLPart is an image input's part.
func (p imagePrep) imageURLPart(in agent.Input) prompt.Content {
	url := in.URL
	if isRemoteImageURL(url) {
		return prompt.Content{Type: "input_text", Text: imageRemoteText}
	}
	if !isDataURL(url) {
		// Neither remote nor inline (file:...): sent as it is, as Codex
		// does.
		d := in.Detail
		if d == "" {
			d = detailHigh
		}
		return prompt.Content{Type: "input_image", ImageURL: url, Detail: d}
	}
	data, err := imageinput.ParseDataURL(url)
	if err != nil {
		return prompt.Content{Type: "input_text", Text: imageErrorText(err)}
	}
	return p.prepare(data, in.Detail)
}

// prepare makes an image part of data at the detail the model and the
// input ask for.
func (p imagePrep) prepare(data []byte, detail string) prompt.Content {
	lim := imageinput.High
	switch {
	case p.original:
		lim, detail = imageinput.Original, detailOriginal
	case detail == imageDetailLow:
		return prompt.Content{Type: "input_text", Text: imageLowDetailText}
	case detail == detailOriginal:
		lim = imageinput.Original
	case detail == "":
		detail = detailHigh
	}
	img, err := imageinput.Prepare(data, lim)
	if err != nil {
		return prompt.Content{Type: "input_text", Text: imageErrorText(err)}
	}
	return prompt.Content{Type: "input_image", ImageURL: img.DataURL(), Detail: detail}
}

func imageErrorText(err error) string {
	if errors.Is(err, imageinput.ErrTooLarge) {
		return imageTooLargeText
	}
	return imageUnusableText
}

// readErrorText is a read error without the operation and path the
// message already names.
func readErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

func isRemoteImageURL(url string) bool {
	scheme, _, ok := strings.Cut(url, ":")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

func isDataURL(url string) bool {
	return len(url) >= 5 && strings.EqualFold(url[:5], "data:")
}

// withoutImageDetail is input with no image part's detail, as Codex sends
// a Responses Lite model images: the history keeps the detail, the copy
// sent goes without it.
func withoutImageDetail(input []prompt.Item) []prompt.Item {
	return mapImageDetail(input, func(string) string { return "" })
}

// withoutOriginalDetail is input with an image part's "original" detail
// made "high", as Codex sends the history to a model that does not take
// original detail (after a switch from one that does).
func withoutOriginalDetail(input []prompt.Item) []prompt.Item {
	return mapImageDetail(input, func(d string) string {
		if d == detailOriginal {
			return detailHigh
		}
		return d
	})
}

// mapImageDetail is input with f applied to the detail of every image
// part (of messages and of tool outputs); the items it changes are copies.
func mapImageDetail(input []prompt.Item, f func(string) string) []prompt.Item {
	var out []prompt.Item
	remap := func(cs []prompt.Content) ([]prompt.Content, bool) {
		changed := false
		for k, c := range cs {
			if c.Type == "input_image" && f(c.Detail) != c.Detail {
				if !changed {
					cs, changed = append([]prompt.Content(nil), cs...), true
				}
				cs[k].Detail = f(c.Detail)
			}
		}
		return cs, changed
	}
	for i, it := range input {
		content, a := remap(it.Content)
		outContent, b := remap(it.OutputContent)
		if !a && !b {
			continue
		}
		if out == nil {
			out = append([]prompt.Item(nil), input...)
		}
		it.Content, it.OutputContent = content, outContent
		out[i] = it
	}
	if out == nil {
		return input
	}
	return out
}
