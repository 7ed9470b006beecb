package execproto

import "github.com/codexd/codexd/jsonrpc"

// Typed definitions of every exec-server method and notification. The server
// registers its handlers with these values and the client calls through
// them, so a method's name and types are written once.
var (
	ProcessStart     = jsonrpc.Method[ProcessStartParams, ProcessStartResponse](MethodProcessStart)
	ProcessRead      = jsonrpc.Method[ProcessReadParams, ProcessReadResponse](MethodProcessRead)
	ProcessWrite     = jsonrpc.Method[ProcessWriteParams, ProcessWriteResponse](MethodProcessWrite)
	ProcessSignalM   = jsonrpc.Method[ProcessSignalParams, ProcessSignalResponse](MethodProcessSignal)
	ProcessTerminate = jsonrpc.Method[ProcessTerminateParams, ProcessTerminateResponse](MethodProcessTerminate)

	ProcessOutput = jsonrpc.Notification[ProcessOutputNotification](MethodProcessOutput)
	ProcessExited = jsonrpc.Notification[ProcessExitedNotification](MethodProcessExited)
	ProcessClosed = jsonrpc.Notification[ProcessClosedNotification](MethodProcessClosed)

	FsReadFile        = jsonrpc.Method[FsReadFileParams, FsReadFileResponse](MethodFsReadFile)
	FsWriteFile       = jsonrpc.Method[FsWriteFileParams, FsWriteFileResponse](MethodFsWriteFile)
	FsCreateDirectory = jsonrpc.Method[FsCreateDirectoryParams, FsCreateDirectoryResponse](MethodFsCreateDirectory)
	FsGetMetadata     = jsonrpc.Method[FsGetMetadataParams, FsGetMetadataResponse](MethodFsGetMetadata)
	FsReadDirectory   = jsonrpc.Method[FsReadDirectoryParams, FsReadDirectoryResponse](MethodFsReadDirectory)
	FsRemove          = jsonrpc.Method[FsRemoveParams, FsRemoveResponse](MethodFsRemove)
	FsCopy            = jsonrpc.Method[FsCopyParams, FsCopyResponse](MethodFsCopy)
	FsCanonicalize    = jsonrpc.Method[FsCanonicalizeParams, FsCanonicalizeResponse](MethodFsCanonicalize)
	FsOpen            = jsonrpc.Method[FsOpenParams, FsOpenResponse](MethodFsOpen)
	FsReadBlock       = jsonrpc.Method[FsReadBlockParams, FsReadBlockResponse](MethodFsReadBlock)
	FsWriteBlock      = jsonrpc.Method[FsWriteBlockParams, FsWriteBlockResponse](MethodFsWriteBlock)
	FsClose           = jsonrpc.Method[FsCloseParams, FsCloseResponse](MethodFsClose)
	FsWalk            = jsonrpc.Method[FsWalkParams, FsWalkResponse](MethodFsWalk)
	FsWatchMissing    = jsonrpc.Method[FsWatchMissingParams, FsWatchMissingResponse](MethodFsWatchMissing)
	FsMissingChanged  = jsonrpc.Notification[FsMissingChangedNotification](MethodFsMissingChanged)

	HTTPRequest          = jsonrpc.Method[HTTPRequestParams, HTTPRequestResponse](MethodHTTPRequest)
	HTTPRequestBodyDelta = jsonrpc.Notification[HTTPRequestBodyDeltaNotification](MethodHTTPRequestBodyDelta)
)
