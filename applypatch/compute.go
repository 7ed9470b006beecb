package applypatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// FS is the filesystem a patch is computed against and applied to. The core
// implements it with the exec-server client; [LocalFS] uses the os package.
// Paths are absolute. A missing path must give an error that satisfies
// errors.Is(err, fs.ErrNotExist).
type FS interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile creates or truncates the file; it need not create parents.
	WriteFile(ctx context.Context, path string, data []byte) error
	// Remove removes a file (never a directory tree).
	Remove(ctx context.Context, path string) error
	MkdirAll(ctx context.Context, path string) error
	Stat(ctx context.Context, path string) (FileInfo, error)
}

// FileInfo is what [FS.Stat] reports.
type FileInfo struct {
	IsDir bool
}

// Change is one verified file operation, with absolute paths.
type Change struct {
	Kind HunkKind
	Path string
	// MovePath is the absolute destination of a moved file, or "".
	MovePath string
	// OldContent is the file before the change: an updated or deleted
	// file's text, or the text an added file replaces (Overwrites set). For
	// a move, OverwrittenMove holds what the destination had.
	OldContent      string
	Overwrites      bool
	OverwrittenMove *string
	// NewContent is an added or updated file's text ("" for a delete).
	NewContent string
	// UnifiedDiff is the change as unified diff hunks without file headers
	// (one line of context, as Codex's fileChange diffs).
	UnifiedDiff string

	// display is the path as the patch spelled it (the destination for a
	// move), for the summary Codex prints.
	display string
	// clobbers is whether the path an add writes, or a move's destination,
	// held anything (a file that is not text included); removed are the
	// lines, with their endings, that an update's chunks replace, in file
	// order. [Rebase] compares them to find what a change would lose.
	clobbers bool
	raw      string // the bytes clobbered, text or not
	removed  []string
}

// Plan is a verified patch: what applying it will do, in patch order.
type Plan struct {
	// Cwd is the absolute directory relative paths were resolved against.
	Cwd string
	// Patch is the patch text as a standalone apply_patch argument.
	Patch   string
	Changes []Change

	// blocked is the first write Compute foresaw failing (a file where a
	// directory is or will be, or under a file). Codex 0.169 verifies such
	// a patch and fails writing it, after the hunks before; [Plan.Apply]
	// fails the same way but before writing anything.
	blocked *blockedWrite
}

// blockedWrite is a write that cannot succeed: path, and the errno writing
// it would meet.
type blockedWrite struct {
	path  string
	errno syscall.Errno
}

func (b *blockedWrite) Error() string {
	return "Failed to write file " + b.path + ": " + ioMessage(b.errno)
}

// Empty reports a patch with no hunks ("*** Begin Patch\n*** End Patch").
// Codex refuses it ("patch rejected: empty patch" from its safety check,
// "No files were modified." from [Plan.Apply]).
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// Paths returns every absolute path the plan writes or removes, moves'
// destinations included, each once, sorted. The approval and sandbox layers
// check these.
func (p *Plan) Paths() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, c := range p.Changes {
		add(c.Path)
		add(c.MovePath)
	}
	sort.Strings(out)
	return out
}

// VerifyError is a patch that parsed but cannot be applied to the files as
// they are. Its Error text is Codex's (e.g. "Failed to find expected lines
// in /abs/file:\n..." or "Failed to read file to update /abs/file: No such
// file or directory (os error 2)"); Codex's core shows the model
// "apply_patch verification failed: " followed by it.
type VerifyError struct {
	Path    string
	Message string
	Err     error // the FS error, if one caused it
}

func (e *VerifyError) Error() string { return e.Message }
func (e *VerifyError) Unwrap() error { return e.Err }

func ioVerifyError(path, context string, err error) *VerifyError {
	return &VerifyError{Path: path, Message: context + ": " + ioMessage(err), Err: err}
}

// ResolvePath resolves a patch path against cwd: absolute paths are kept
// (cleaned), relative ones joined to cwd.
func ResolvePath(cwd, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// overlay is the filesystem as the hunks simulated so far left it.
type overlay struct {
	fs    FS
	files map[string]*string // nil: removed by an earlier hunk
	// dirs are the directories that writing the files above creates (or
	// needs): a later hunk may not turn one into a file.
	dirs map[string]bool
}

// read returns a path's text. The error is already Codex's message.
func (o *overlay) read(ctx context.Context, path, context string) (string, error) {
	if s, ok := o.files[path]; ok {
		if s == nil {
			return "", ioVerifyError(path, context, fs.ErrNotExist)
		}
		return *s, nil
	}
	info, err := o.fs.Stat(ctx, path)
	if err != nil {
		return "", ioVerifyError(path, context, err)
	}
	if info.IsDir {
		return "", &VerifyError{Path: path, Message: fmt.Sprintf("%s: path `%s` is not a file", context, path)}
	}
	data, err := o.fs.ReadFile(ctx, path)
	if err != nil {
		return "", ioVerifyError(path, context, err)
	}
	if msg := utf8Problem(data); msg != "" {
		return "", &VerifyError{Path: path, Message: context + ": " + msg}
	}
	return string(data), nil
}

// peek returns a path's text if it is a readable file, for the contents an
// add or move overwrites, and what is there: nil for nothing, else the
// bytes read (a file that is not text has no text but bytes; one that
// cannot be read, empty bytes). It refuses a path that cannot be written as
// a file: a directory, or one under a file.
func (o *overlay) peek(ctx context.Context, path string) (text, raw *string, err error) {
	if err := o.checkParents(ctx, path); err != nil {
		return nil, nil, err
	}
	if o.dirs[path] {
		return nil, nil, writeVerifyError(path, syscall.EISDIR)
	}
	if s, ok := o.files[path]; ok {
		return s, s, nil
	}
	info, err := o.fs.Stat(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err == nil && info.IsDir {
		return nil, nil, writeVerifyError(path, syscall.EISDIR)
	}
	data, err := o.fs.ReadFile(ctx, path)
	s := string(data)
	if err != nil || utf8Problem(data) != "" {
		return nil, &s, nil
	}
	return &s, &s, nil
}

// clobber notes what writing c's file (an add's path, a move's
// destination) replaces.
func (c *Change) clobber(raw *string) {
	c.clobbers = raw != nil
	if raw != nil {
		c.raw = *raw
	}
}

// checkParents refuses a path whose writing would fail on an ancestor that
// is a file, on disk or as an earlier hunk leaves it. Apply writes in patch
// order, so without this check the hunks before it would already be written
// when the write failed. An ancestor that an earlier hunk removed, or that
// is missing, will be created; the nearest one that exists decides.
func (o *overlay) checkParents(ctx context.Context, path string) error {
	for dir := filepath.Dir(path); !o.dirs[dir]; dir = filepath.Dir(dir) {
		if s, ok := o.files[dir]; ok {
			if s != nil {
				return writeVerifyError(path, syscall.ENOTDIR)
			}
		} else {
			// Missing, or unreadable (ENOTDIR, maybe only as text from a
			// remote FS): the answer is further up, where a path exists.
			if info, err := o.fs.Stat(ctx, dir); err == nil {
				if info.IsDir {
					return nil
				}
				return writeVerifyError(path, syscall.ENOTDIR)
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
	return nil
}

// wrote records that path will be a file, and so its ancestors directories.
func (o *overlay) wrote(path string, content *string) {
	o.files[path] = content
	for dir := filepath.Dir(path); !o.dirs[dir]; dir = filepath.Dir(dir) {
		o.dirs[dir] = true
		if dir == filepath.Dir(dir) {
			break
		}
	}
}

// writeVerifyError is the failure Apply would meet writing path; Compute
// records it in the plan (see Plan.blocked) rather than failing.
func writeVerifyError(path string, errno syscall.Errno) *blockedWrite {
	return &blockedWrite{path: path, errno: errno}
}

// Compute verifies p against the files under cwd (an absolute directory)
// and returns every change it makes, without writing anything. Errors are a
// *[VerifyError].
func Compute(ctx context.Context, fsys FS, cwd string, p *Patch) (*Plan, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("applypatch: cwd %q is not absolute", cwd)
	}
	cwd = filepath.Clean(cwd)
	plan := &Plan{Cwd: cwd, Patch: p.Text}
	o := &overlay{fs: fsys, files: map[string]*string{}, dirs: map[string]bool{}}
	for _, h := range p.Hunks {
		path := ResolvePath(cwd, h.Path)
		c := Change{Kind: h.Kind, Path: path, display: h.Path}
		switch h.Kind {
		case KindAdd:
			old, raw, err := o.peek(ctx, path)
			if err = plan.block(err); err != nil {
				return nil, err
			}
			c.clobber(raw)
			if old != nil {
				c.OldContent, c.Overwrites = *old, true
			}
			c.NewContent = h.Contents
			o.wrote(path, &c.NewContent)
		case KindDelete:
			old, err := o.read(ctx, path, "Failed to read "+path)
			if err != nil {
				return nil, err
			}
			c.OldContent = old
			o.files[path] = nil
		case KindUpdate:
			old, err := o.read(ctx, path, "Failed to read file to update "+path)
			if err != nil {
				return nil, err
			}
			updated, removed, err := applyChunks(old, path, h.Chunks)
			if err != nil {
				return nil, err
			}
			c.OldContent, c.NewContent, c.removed = old, updated, removed
			if h.MovePath != "" {
				c.MovePath = ResolvePath(cwd, h.MovePath)
				c.display = h.MovePath
			}
			if c.MovePath != "" && c.MovePath != path {
				prev, raw, err := o.peek(ctx, c.MovePath)
				if err = plan.block(err); err != nil {
					return nil, err
				}
				c.OverwrittenMove = prev
				c.clobber(raw)
				o.files[path] = nil
				o.wrote(c.MovePath, &c.NewContent)
			} else {
				o.files[path] = &c.NewContent
			}
		}
		c.UnifiedDiff = UnifiedDiff(c.OldContent, c.NewContent, 1)
		plan.Changes = append(plan.Changes, c)
	}
	return plan, nil
}

// block records a foreseen write failure (the first one counts) and
// returns any other error.
func (p *Plan) block(err error) error {
	var b *blockedWrite
	if !errors.As(err, &b) {
		return err
	}
	if p.blocked == nil {
		p.blocked = b
	}
	return nil
}

// replacement replaces old lines [start, start+oldLen) with lines.
type replacement struct {
	start, oldLen int
	lines         []string
}

// applyChunks derives an updated file's text as Codex does: each line keeps
// its own ending (LF or CRLF), inserted lines take the file's first ending,
// and the result always ends with a newline. It also returns the lines the
// chunks replace, each with its ending, in file order.
func applyChunks(contents, path string, chunks []Chunk) (string, []string, error) {
	src := parseSource(contents)
	texts := src.texts()
	var reps []replacement
	lineIndex := 0
	for _, c := range chunks {
		if c.HasContext {
			i := seekSequence(texts, []string{c.Context}, lineIndex, false)
			if i < 0 {
				return "", nil, &VerifyError{Path: path, Message: fmt.Sprintf("Failed to find context '%s' in %s", c.Context, path)}
			}
			lineIndex = i + 1
		}
		if len(c.OldLines) == 0 {
			// A pure addition goes at the end of the file (Codex 0.169 no
			// longer puts it before a final empty line).
			reps = append(reps, replacement{len(texts), 0, c.NewLines})
			continue
		}
		pattern, newLines := c.OldLines, c.NewLines
		found := seekSequence(texts, pattern, lineIndex, c.EndOfFile)
		if found < 0 && pattern[len(pattern)-1] == "" {
			// The trailing empty line stands for the file's final newline,
			// which is not a line of texts.
			pattern = pattern[:len(pattern)-1]
			if len(newLines) > 0 && newLines[len(newLines)-1] == "" {
				newLines = newLines[:len(newLines)-1]
			}
			found = seekSequence(texts, pattern, lineIndex, c.EndOfFile)
		}
		if found < 0 {
			return "", nil, &VerifyError{Path: path, Message: fmt.Sprintf("Failed to find expected lines in %s:\n%s", path, strings.Join(c.OldLines, "\n"))}
		}
		reps = append(reps, replacement{found, len(pattern), newLines})
		lineIndex = found + len(pattern)
	}
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	for i := 1; i < len(reps); i++ {
		if reps[i].start < reps[i-1].start+reps[i-1].oldLen {
			// Only an "*** End of File" chunk can land on lines an earlier
			// chunk replaced. Codex's release build then produces garbage;
			// refuse instead.
			return "", nil, &VerifyError{Path: path, Message: fmt.Sprintf("Failed to apply patch to %s: chunks overlap at line %d", path, reps[i].start+1)}
		}
	}
	var removed []string
	for _, r := range reps {
		for _, l := range src.lines[r.start : r.start+r.oldLen] {
			removed = append(removed, l.text+l.ending)
		}
	}
	src.replace(reps)
	return src.String(), removed, nil
}

// sourceLine is a line of a file without its ending; ending is "\n",
// "\r\n", or "" for a last line without one.
type sourceLine struct{ text, ending string }

type sourceFile struct {
	lines     []sourceLine
	preferred string
}

func parseSource(contents string) *sourceFile {
	f := &sourceFile{}
	for contents != "" {
		i := strings.IndexByte(contents, '\n')
		if i < 0 {
			f.lines = append(f.lines, sourceLine{text: contents})
			break
		}
		l := sourceLine{text: contents[:i], ending: "\n"}
		if strings.HasSuffix(l.text, "\r") {
			l.text, l.ending = l.text[:len(l.text)-1], "\r\n"
		}
		if f.preferred == "" {
			// The first newline decides, as rustfmt and Ruff detect it.
			f.preferred = l.ending
		}
		f.lines = append(f.lines, l)
		contents = contents[i+1:]
	}
	if f.preferred == "" {
		f.preferred = "\n"
	}
	return f
}

func (f *sourceFile) texts() []string {
	out := make([]string, len(f.lines))
	for i, l := range f.lines {
		out[i] = l.text
	}
	return out
}

// replace applies sorted, non-overlapping replacements; every line then has
// an ending (an update always ends with a newline).
func (f *sourceFile) replace(reps []replacement) {
	var out []sourceLine
	next := 0
	for _, r := range reps {
		out = append(out, f.lines[next:r.start]...)
		for _, t := range r.lines {
			out = append(out, sourceLine{t, f.preferred})
		}
		next = r.start + r.oldLen
	}
	out = append(out, f.lines[next:]...)
	for i := range out {
		if out[i].ending == "" {
			out[i].ending = f.preferred
		}
	}
	f.lines = out
}

func (f *sourceFile) String() string {
	var b strings.Builder
	for _, l := range f.lines {
		b.WriteString(l.text)
		b.WriteString(l.ending)
	}
	return b.String()
}
