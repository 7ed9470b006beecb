package execproto

import (
	"bytes"
	"encoding/json"
)

// SandboxContext is the `sandbox` member Codex 0.169's app-server sends
// with process/start and the fs methods (its FileSystemSandboxContext):
// the permissions to run under and the directories their special paths
// stand for. Codex sends, for a read-only turn:
//
//	{"permissions":{"type":"managed","file_system":{"type":"restricted",
//	  "entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]},
//	  "network":"restricted"},
//	 "cwd":"file:///work","workspaceRoots":["file:///work"],
//	 "windowsSandboxLevel":"disabled","windowsSandboxProxySettingsMode":"reconcile",
//	 "useLegacyLandlock":false}
//
// and null when the turn runs with danger-full-access.
type SandboxContext struct {
	Permissions PermissionProfile
	// Cwd and WorkspaceRoots are file URIs ("" and nil when absent); a
	// newer shape carries them in policyContext, which is read too.
	Cwd            string
	WorkspaceRoots []string
}

// Permission profile types.
const (
	PermissionsManaged  = "managed"
	PermissionsDisabled = "disabled"
	PermissionsExternal = "external"
)

// PermissionProfile is Codex's permission profile: Type is managed (the
// file system and network below), disabled (no sandbox) or external (the
// caller confines).
type PermissionProfile struct {
	Type string
	// FileSystem of a managed profile: Type "restricted" (Entries) or
	// "unrestricted".
	FileSystem FileSystemPermissions
	// Network is "restricted" or "enabled".
	Network string
}

// FileSystemPermissions is a managed profile's file_system.
type FileSystemPermissions struct {
	Type    string
	Entries []FileSystemEntry
}

// FileSystemEntry grants Access ("read", "write" or "none") under Path.
type FileSystemEntry struct {
	Path   FileSystemPath
	Access string
	// MissingPathBehavior is "skip" to ignore a path that does not exist.
	MissingPathBehavior string
}

// FileSystemPath is either a file URI (Type "path", URI) or a special
// path (Type "special", Kind with an optional Subpath).
type FileSystemPath struct {
	Type    string
	URI     string
	Kind    string
	Subpath string
}

// The special paths Codex 0.169 knows, in its order.
var SpecialPathKinds = []string{"root", "minimal", "current_working_directory", "project_roots", "tmpdir", "slash_tmp", "unknown"}

// DecodeSandboxContext decodes a non-null sandbox member, refusing what
// Codex refuses with its messages (-32602).
func DecodeSandboxContext(raw json.RawMessage) (*SandboxContext, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, paramsErr("sandbox: expected struct WireFileSystemSandboxContext")
	}
	permsRaw, ok := sbMember(top, "permissions")
	if !ok {
		return nil, paramsErr("missing field `permissions`")
	}
	out := &SandboxContext{}
	if err := decodePermissions(permsRaw, &out.Permissions); err != nil {
		return nil, err
	}
	if _, ok := sbMember(top, "windowsSandboxLevel"); !ok {
		return nil, paramsErr("missing field `windowsSandboxLevel`")
	}
	if err := optString(top, "cwd", &out.Cwd); err != nil {
		return nil, err
	}
	if err := optStrings(top, "workspaceRoots", &out.WorkspaceRoots); err != nil {
		return nil, err
	}
	if pc, ok := sbMember(top, "policyContext"); ok {
		var ctx map[string]json.RawMessage
		if json.Unmarshal(pc, &ctx) != nil || ctx == nil {
			return nil, paramsErr("sandbox.policyContext: expected an object")
		}
		if err := optString(ctx, "cwd", &out.Cwd); err != nil {
			return nil, err
		}
		if err := optStrings(ctx, "workspaceRoots", &out.WorkspaceRoots); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodePermissions(raw json.RawMessage, p *PermissionProfile) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return paramsErr("sandbox.permissions: expected an object")
	}
	if err := variant(m, "type", &p.Type, PermissionsManaged, PermissionsDisabled, PermissionsExternal); err != nil {
		return err
	}
	switch p.Type {
	case PermissionsManaged:
		fsRaw, ok := sbMember(m, "file_system")
		if !ok {
			return paramsErr("missing field `file_system`")
		}
		var fsm map[string]json.RawMessage
		if json.Unmarshal(fsRaw, &fsm) != nil || fsm == nil {
			return paramsErr("sandbox.permissions.file_system: expected an object")
		}
		if err := variant(fsm, "type", &p.FileSystem.Type, "restricted", "unrestricted"); err != nil {
			return err
		}
		if p.FileSystem.Type == "restricted" {
			entries, ok := sbMember(fsm, "entries")
			if !ok {
				return paramsErr("missing field `entries`")
			}
			var list []json.RawMessage
			if json.Unmarshal(entries, &list) != nil {
				return paramsErr("sandbox.permissions.file_system.entries: expected an array")
			}
			for _, e := range list {
				var fe FileSystemEntry
				if err := decodeEntry(e, &fe); err != nil {
					return err
				}
				p.FileSystem.Entries = append(p.FileSystem.Entries, fe)
			}
		}
		if err := variant(m, "network", &p.Network, "restricted", "enabled"); err != nil {
			return err
		}
	case PermissionsExternal:
		p.Network = "restricted"
		if _, ok := sbMember(m, "network"); ok {
			if err := variant(m, "network", &p.Network, "restricted", "enabled"); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeEntry(raw json.RawMessage, e *FileSystemEntry) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return paramsErr("sandbox.permissions.file_system.entries: expected objects")
	}
	pathRaw, ok := sbMember(m, "path")
	if !ok {
		return paramsErr("missing field `path`")
	}
	var pm map[string]json.RawMessage
	if json.Unmarshal(pathRaw, &pm) != nil || pm == nil {
		return paramsErr("sandbox entry path: expected an object")
	}
	if err := variant(pm, "type", &e.Path.Type, "path", "special"); err != nil {
		return err
	}
	if e.Path.Type == "path" {
		if _, ok := sbMember(pm, "path"); !ok {
			return paramsErr("missing field `path`")
		}
		if err := optString(pm, "path", &e.Path.URI); err != nil {
			return err
		}
	} else {
		valRaw, ok := sbMember(pm, "value")
		if !ok {
			return paramsErr("missing field `value`")
		}
		var vm map[string]json.RawMessage
		if json.Unmarshal(valRaw, &vm) != nil || vm == nil {
			return paramsErr("sandbox special path: expected an object")
		}
		if err := variant(vm, "kind", &e.Path.Kind, SpecialPathKinds...); err != nil {
			return err
		}
		if err := optString(vm, "subpath", &e.Path.Subpath); err != nil {
			return err
		}
	}
	if err := variant(m, "access", &e.Access, "read", "write", "none"); err != nil {
		return err
	}
	if _, ok := sbMember(m, "missing_path_behavior"); ok {
		if err := variant(m, "missing_path_behavior", &e.MissingPathBehavior, "skip", "error"); err != nil {
			return err
		}
	}
	return nil
}

// sbMember is m[name] unless absent or null.
func sbMember(m map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	v, ok := m[name]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

// variant reads the required string enum m[name] into *dst.
func variant(m map[string]json.RawMessage, name string, dst *string, variants ...string) error {
	v, ok := sbMember(m, name)
	if !ok {
		return paramsErr("missing field `%s`", name)
	}
	if json.Unmarshal(v, dst) != nil {
		return paramsErr("sandbox: %s: expected a string", name)
	}
	for _, want := range variants {
		if *dst == want {
			return nil
		}
	}
	return unknownVariant(*dst, variants)
}

func optString(m map[string]json.RawMessage, name string, dst *string) error {
	if v, ok := sbMember(m, name); ok && json.Unmarshal(v, dst) != nil {
		return paramsErr("sandbox: %s: expected a string", name)
	}
	return nil
}

func optStrings(m map[string]json.RawMessage, name string, dst *[]string) error {
	if v, ok := sbMember(m, name); ok && json.Unmarshal(v, dst) != nil {
		return paramsErr("sandbox: %s: expected an array of strings", name)
	}
	return nil
}
