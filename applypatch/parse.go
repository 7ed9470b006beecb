package applypatch

import (
	"fmt"
	"strings"
)

// The markers of the format. Codex compares hunk headers after trimming the
// line, but "*** Move to: " and "*** End of File" exactly as written.
const (
	beginPatchMarker   = "*** Begin Patch"
	endPatchMarker     = "*** End Patch"
	addFileMarker      = "*** Add File: "
	deleteFileMarker   = "*** Delete File: "
	updateFileMarker   = "*** Update File: "
	moveToMarker       = "*** Move to: "
	eofMarker          = "*** End of File"
	contextMarker      = "@@ "
	emptyContextMarker = "@@"
)

// HunkKind says what a hunk does to its file.
type HunkKind string

// The three kinds of hunk, spelled as the app-server's fileChange kinds.
const (
	KindAdd    HunkKind = "add"
	KindDelete HunkKind = "delete"
	KindUpdate HunkKind = "update"
)

// Hunk is one file operation of a patch. Paths are as written in the patch
// (relative or absolute); [Compute] resolves them.
type Hunk struct {
	Kind HunkKind
	Path string
	// MovePath is the "*** Move to:" destination of an update, or "".
	MovePath string
	// Contents is an added file's text: every "+" line followed by "\n".
	Contents string
	// Chunks are an update's changes, in the order they occur in the file.
	Chunks []Chunk
}

// Chunk is one "@@" section of an update.
type Chunk struct {
	// Context is the text after "@@ ": a line (usually a class or function
	// header) that must occur before OldLines. HasContext is false for a
	// bare "@@" or a first chunk without one.
	Context    string
	HasContext bool
	// OldLines must occur in the file (after Context) and are replaced by
	// NewLines. Context lines (" ") are in both.
	OldLines []string
	NewLines []string
	// EndOfFile is set by "*** End of File": OldLines must end the file.
	EndOfFile bool
}

// Patch is a parsed patch.
type Patch struct {
	Hunks []Hunk
	// Text is the patch as a standalone apply_patch argument: trimmed,
	// without a heredoc wrapper, lines joined with "\n" (CRLF endings become
	// LF), so that it parses back to the same hunks.
	Text string
}

// ParseError is a patch that does not follow the format. Its Error text is
// Codex's: "invalid patch: MESSAGE" for the envelope, "invalid hunk at line
// N, MESSAGE" for a hunk (N counts the lines of the trimmed patch, the Begin
// marker being line 1).
type ParseError struct {
	Message string
	// Line is the 1-based line of a bad hunk; 0 for an envelope error.
	Line int
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "invalid patch: " + e.Message
	}
	return fmt.Sprintf("invalid hunk at line %d, %s", e.Line, e.Message)
}

// StderrText is how Codex's apply_patch executable reports the error on
// stderr ("Invalid patch: ..." / "Invalid patch hunk on line N: ...").
func (e *ParseError) StderrText() string {
	if e.Line == 0 {
		return "Invalid patch: " + e.Message
	}
	return fmt.Sprintf("Invalid patch hunk on line %d: %s", e.Line, e.Message)
}

func envelopeError(msg string) *ParseError { return &ParseError{Message: msg} }

func hunkError(line int, format string, args ...any) *ParseError {
	return &ParseError{Message: fmt.Sprintf(format, args...), Line: line}
}

const (
	msgFirstLine    = "The first line of the patch must be '*** Begin Patch'"
	msgLastLine     = "The last line of the patch must be '*** End Patch'"
	msgNoChunkLines = "Update hunk does not contain any lines"
)

// Parse parses a patch in Codex's lenient mode: the text is trimmed, and if
// it is not a patch but a heredoc (`<<EOF`, `<<'EOF'` or `<<"EOF"` first,
// a last line ending in EOF, at least four lines) its inside is parsed.
func Parse(text string) (*Patch, error) {
	lines := splitLines(strings.TrimSpace(text))
	body, err := envelope(lines)
	if err != nil {
		inner, ok := heredocInside(lines)
		if !ok {
			return nil, err
		}
		if body, err = envelope(inner); err != nil {
			return nil, err
		}
		lines = inner
	}
	p := &Patch{Text: joinLines(lines)}
	lineNumber := 2
	for len(body) > 0 {
		h, n, err := parseHunk(body, lineNumber)
		if err != nil {
			return nil, err
		}
		p.Hunks = append(p.Hunks, h)
		lineNumber += n
		body = body[n:]
	}
	return p, nil
}

// joinLines undoes splitLines with "\n" endings. A line that still ends in
// "\r" had "\r\r\n" and lost one "\r": it gets it back, or the text would
// parse to a line without its own "\r".
func joinLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i < len(lines)-1 {
			if strings.HasSuffix(l, "\r") {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// splitLines splits as Rust's str::lines: on "\n", dropping one "\r" before
// it, with no empty line after a final "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// envelope checks the Begin and End markers (each compared trimmed) and
// returns the lines between them.
func envelope(lines []string) ([]string, error) {
	var first, last string
	if len(lines) > 0 {
		first = strings.TrimSpace(lines[0])
		last = strings.TrimSpace(lines[len(lines)-1])
	}
	switch {
	case len(lines) > 0 && first == beginPatchMarker && last == endPatchMarker && len(lines) >= 2:
		return lines[1 : len(lines)-1], nil
	case len(lines) > 0 && first != beginPatchMarker:
		return nil, envelopeError(msgFirstLine)
	default:
		return nil, envelopeError(msgLastLine)
	}
}

func heredocInside(lines []string) ([]string, bool) {
	if len(lines) < 4 {
		return nil, false
	}
	first, last := lines[0], lines[len(lines)-1]
	if (first == "<<EOF" || first == "<<'EOF'" || first == `<<"EOF"`) && strings.HasSuffix(last, "EOF") {
		return lines[1 : len(lines)-1], true
	}
	return nil, false
}

// parseHunk parses the hunk at the start of lines and returns it with the
// number of lines it took.
func parseHunk(lines []string, lineNumber int) (Hunk, int, error) {
	first := strings.TrimSpace(lines[0])
	if path, ok := strings.CutPrefix(first, addFileMarker); ok {
		var b strings.Builder
		n := 1
		for _, l := range lines[1:] {
			added, ok := strings.CutPrefix(l, "+")
			if !ok {
				break
			}
			b.WriteString(added)
			b.WriteByte('\n')
			n++
		}
		return Hunk{Kind: KindAdd, Path: path, Contents: b.String()}, n, nil
	}
	if path, ok := strings.CutPrefix(first, deleteFileMarker); ok {
		return Hunk{Kind: KindDelete, Path: path}, 1, nil
	}
	if path, ok := strings.CutPrefix(first, updateFileMarker); ok {
		h := Hunk{Kind: KindUpdate, Path: path}
		rest, n := lines[1:], 1
		if len(rest) > 0 {
			if dest, ok := strings.CutPrefix(rest[0], moveToMarker); ok {
				h.MovePath = dest
				rest, n = rest[1:], n+1
			}
		}
		for len(rest) > 0 {
			if strings.TrimSpace(rest[0]) == "" {
				rest, n = rest[1:], n+1
				continue
			}
			if strings.HasPrefix(rest[0], "*") {
				break
			}
			c, used, err := parseChunk(rest, lineNumber+n, len(h.Chunks) == 0)
			if err != nil {
				return Hunk{}, 0, err
			}
			h.Chunks = append(h.Chunks, c)
			rest, n = rest[used:], n+used
		}
		if len(h.Chunks) == 0 {
			return Hunk{}, 0, hunkError(lineNumber, "Update file hunk for path '%s' is empty", path)
		}
		return h, n, nil
	}
	return Hunk{}, 0, hunkError(lineNumber,
		"'%s' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
		first)
}

// parseChunk parses one "@@" section. Only the first chunk of an update may
// leave out its "@@" line.
func parseChunk(lines []string, lineNumber int, allowMissingContext bool) (Chunk, int, error) {
	var c Chunk
	start := 1
	switch {
	case lines[0] == emptyContextMarker:
	case strings.HasPrefix(lines[0], contextMarker):
		c.Context, c.HasContext = lines[0][len(contextMarker):], true
	default:
		if !allowMissingContext {
			return Chunk{}, 0, hunkError(lineNumber,
				"Expected update hunk to start with a @@ context marker, got: '%s'", lines[0])
		}
		start = 0
	}
	if start >= len(lines) {
		return Chunk{}, 0, hunkError(lineNumber+1, msgNoChunkLines)
	}
	parsed := 0
loop:
	for _, l := range lines[start:] {
		if l == eofMarker {
			if parsed == 0 {
				return Chunk{}, 0, hunkError(lineNumber+1, msgNoChunkLines)
			}
			c.EndOfFile = true
			parsed++
			break
		}
		switch {
		case l == "":
			// An empty line is an empty context line (editors strip the
			// space of " ").
			c.OldLines = append(c.OldLines, "")
			c.NewLines = append(c.NewLines, "")
		case l[0] == ' ':
			c.OldLines = append(c.OldLines, l[1:])
			c.NewLines = append(c.NewLines, l[1:])
		case l[0] == '+':
			c.NewLines = append(c.NewLines, l[1:])
		case l[0] == '-':
			c.OldLines = append(c.OldLines, l[1:])
		default:
			if parsed == 0 {
				return Chunk{}, 0, hunkError(lineNumber+1,
					"Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l)
			}
			// The start of the next chunk or hunk.
			break loop
		}
		parsed++
	}
	return c, parsed + start, nil
}
