// Package tomledit changes one key of a TOML document in place and leaves
// every other byte as it was: comments, key order, spacing and the way the
// untouched values are written. It is how codexd's config/value/write and
// config/batchWrite keep a user's config.toml as the user wrote it, with the
// results Codex 0.169's TOML editing (toml_edit) gives: a replaced value
// keeps its key, spacing and trailing comment; a removed key takes the
// comments above it along; a new key goes after the last key of its table;
// a new table goes after its parent's last section.
//
// It scans only the structure it needs (table headers, key/value
// statements, where each value starts and ends) and never evaluates
// values: reading the document's values is BurntSushi/toml's job, and
// callers check the edited text with it. It never touches files.
package tomledit
