package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// HelperArg is the first argument that makes this program a sandbox helper.
const HelperArg = "__codexd_sandbox"

// Exit codes of the helper when the command does not run.
const (
	// ExitCannotRun: the sandbox could not be set up (no Landlock, a bad
	// policy, a failed restriction) or the command could not be executed.
	ExitCannotRun = 126
	// ExitNotFound: the command was not found.
	ExitNotFound = 127
)

// Wrap returns the argv that runs argv confined by p: argv itself for
// danger-full-access, else [self, HelperArg, POLICY, "--", argv...], where
// self is the absolute path of this program (os.Executable) on the machine
// that will run the command. It does not check Landlock: the helper does,
// where the command runs (see [Check] for this machine).
func Wrap(p Policy, argv []string, self string) ([]string, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	if !p.Mode.Confined() {
		return argv, nil
	}
	if !filepath.IsAbs(self) {
		return nil, fmt.Errorf("sandbox: helper path %q is not absolute", self)
	}
	enc, err := encodePolicy(p)
	if err != nil {
		return nil, err
	}
	return append([]string{self, HelperArg, enc, "--"}, argv...), nil
}

// ErrUnavailable is a confined mode on a kernel without Landlock.
var ErrUnavailable = errors.New("sandbox: Landlock is not available on this kernel")

// probeABI asks the kernel for its Landlock ABI version; tests replace it.
var probeABI = func() (int, error) { return ll.LandlockGetABIVersion() }

// Available returns the kernel's Landlock ABI version (1 or more), or an
// error wrapping ErrUnavailable.
func Available() (abi int, err error) { return available(probeABI) }

func available(probe func() (int, error)) (int, error) {
	abi, err := probe()
	if err != nil {
		return 0, fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	if abi < 1 {
		return 0, ErrUnavailable
	}
	return abi, nil
}

// Check reports whether commands can run under mode on this machine: nil
// for danger-full-access, and for the confined modes an error that says
// why not when the kernel has no Landlock. Codex falls back to running
// without a sandbox in some setups; codexd refuses.
func Check(mode Mode) error {
	if !mode.Confined() {
		if mode != DangerFullAccess {
			return fmt.Errorf("%w %q", ErrUnknownMode, mode)
		}
		return nil
	}
	if _, err := Available(); err != nil {
		return fmt.Errorf("the %s sandbox cannot be enforced: %w; refusing to run commands unconfined (use danger-full-access to run without a sandbox)", mode, err)
	}
	return nil
}
