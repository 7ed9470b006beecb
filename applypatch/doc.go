// Package applypatch reads Codex's apply_patch format and turns it into a
// verified set of file changes.
//
// The format is the one Codex's models are trained on:
//
//	*** Begin Patch
//	*** Add File: hello.txt
//	+Hello world
//	*** Update File: src/app.py
//	*** Move to: src/main.py
//	@@ def greet():
//	-print("Hi")
//	+print("Hello, world!")
//	*** Delete File: obsolete.txt
//	*** End Patch
//
// Parsing follows Codex's apply-patch crate (0.169) line for line,
// including its leniency: whitespace around the markers, a patch wrapped in
// a `<<'EOF'` heredoc, blank lines between chunks, a first chunk without
// `@@`, and the four passes of context matching (exact, then ignoring
// trailing whitespace, then ignoring surrounding whitespace, then with
// typographic dashes, quotes and spaces folded to ASCII). Error texts are
// the crate's, so a model reads what Codex's would have shown it.
//
// The work happens in these steps, each of which the caller sees:
//
//  1. [Parse] checks the text and returns its hunks, or a *[ParseError].
//  2. [Compute] reads the current files through an [FS] and derives every
//     change (kind, absolute paths, old and new contents, unified diff).
//     Hunks are simulated in order over an overlay of what earlier hunks
//     changed, so a later hunk sees an earlier one's result exactly as
//     applying them in order would. Anything that cannot be applied (a
//     context that is not found, a file that does not exist or is a
//     directory) is a *[VerifyError] here, before any write. A write that
//     is bound to fail (a file where a directory is or will be, or under a
//     file) verifies in Codex 0.169 and fails writing; Compute notes it in
//     the plan, and step 4 fails with it before writing anything.
//  3. [Rebase], when time passed since step 2 (an approval prompt),
//     computes the patch again over the files as they are now, keeping what
//     was written to them meanwhile, and returns a *[ConflictError] where
//     applying it would lose any of that.
//  4. [Plan.Apply] writes the verified changes in patch order. A write that
//     fails midway (the disk, a permission, a race with another writer)
//     returns a *[WriteError] naming the files already written; its text is
//     Codex's, the operation and the path without the cause.
//
// [Intercept] recognises a patch sent through the shell (`apply_patch
// <<'EOF' ... EOF`, optionally after `cd DIR &&`, inside `bash -lc`),
// as Codex's maybe_parse_apply_patch_verified does, so that it becomes the
// same file change with the same approval and diff.
//
// Where it deliberately differs from Codex 0.169: nothing is written unless
// every hunk verifies (Codex's executable writes hunk by hunk and leaves a
// partial patch behind); a "*** Move to:" naming the file itself is an
// update (Codex writes the file, then deletes it as the "original"); and two
// chunks that land on the same lines (only possible with "*** End of File")
// are refused instead of producing a garbled file. The conformance tests run
// the real Codex when CODEX_BIN is set and compare files and messages.
//
// The package must never touch the filesystem except through the [FS] it is
// given (the agent core passes one backed by the exec-server, possibly on
// another machine), never write before every hunk has been verified, and
// never know of turns, threads, approvals or JSON-RPC: it answers what a
// patch would change, and changes it when told to.
package applypatch
