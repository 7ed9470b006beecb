package appproto

import (
	"bytes"

	"github.com/go-json-experiment/json"

	"github.com/codexd/codexd/jsonrpc"
)

// Method names of config/value/write and config/batchWrite.
const (
	MethodConfigValueWrite = "config/value/write"
	MethodConfigBatchWrite = "config/batchWrite"
)

// ConfigValueWrite and ConfigBatchWrite are their typed definitions.
var (
	ConfigValueWrite = jsonrpc.Method[ConfigValueWriteParams, ConfigWriteResponse](MethodConfigValueWrite)
	ConfigBatchWrite = jsonrpc.Method[ConfigBatchWriteParams, ConfigWriteResponse](MethodConfigBatchWrite)
)

// ConfigValueWriteParams set one key of the user's config.toml.
type ConfigValueWriteParams struct {
	ConfigEdit
	FilePath        *string `json:"filePath,omitzero"`
	ExpectedVersion *string `json:"expectedVersion,omitzero"`
}

// ConfigBatchWriteParams apply several edits at once: all or none.
type ConfigBatchWriteParams struct {
	Edits            []ConfigEdit `json:"edits"`
	FilePath         *string      `json:"filePath,omitzero"`
	ExpectedVersion  *string      `json:"expectedVersion,omitzero"`
	ReloadUserConfig bool         `json:"reloadUserConfig,omitzero"`
}

// ConfigEdit is one edit: the dotted key path, the value (JSON null
// removes the key) and how a table value meets an existing table.
type ConfigEdit struct {
	KeyPath       string        `json:"keyPath"`
	Value         AnyValue      `json:"value"`
	MergeStrategy MergeStrategy `json:"mergeStrategy"`
}

// AnyValue is a required member that may hold any JSON value, null
// included: its text, as sent.
type AnyValue []byte

// UnmarshalJSON keeps the value's text.
func (v *AnyValue) UnmarshalJSON(b []byte) error {
	*v = bytes.Clone(b)
	return nil
}

// MarshalJSON writes the value's text (null when empty).
func (v AnyValue) MarshalJSON() ([]byte, error) {
	if len(v) == 0 {
		return []byte("null"), nil
	}
	return v, nil
}

// MergeStrategy is "replace" or "upsert" (a table is merged into the
// existing one).
type MergeStrategy string

// The merge strategies.
const (
	MergeReplace MergeStrategy = "replace"
	MergeUpsert  MergeStrategy = "upsert"
)

// UnmarshalJSON accepts the two strategies, with serde's error otherwise.
func (m *MergeStrategy) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return decodeError("invalid type: %s, expected string or map", serdeKind(b))
	}
	switch MergeStrategy(s) {
	case MergeReplace, MergeUpsert:
		*m = MergeStrategy(s)
		return nil
	}
	return decodeError("unknown variant `%s`, expected `replace` or `upsert`", s)
}

// ConfigWriteResponse is the result of both writes: the user layer's new
// version and the file written.
type ConfigWriteResponse struct {
	Status             string  `json:"status"`
	Version            string  `json:"version"`
	FilePath           string  `json:"filePath"`
	OverriddenMetadata *string `json:"overriddenMetadata"`
}

// Config write error codes (error.data.config_write_error_code).
const (
	ConfigWriteValidationError = "configValidationError"
	ConfigWriteVersionConflict = "configVersionConflict"
	ConfigWriteLayerReadonly   = "configLayerReadonly"
)
