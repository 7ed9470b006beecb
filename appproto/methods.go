package appproto

import "github.com/codexd/codexd/jsonrpc"

// Method names of the client requests codexd serves.
const (
	MethodInitialize             = "initialize"
	MethodInitialized            = "initialized"
	MethodThreadStart            = "thread/start"
	MethodThreadResume           = "thread/resume"
	MethodThreadFork             = "thread/fork"
	MethodThreadRead             = "thread/read"
	MethodThreadList             = "thread/list"
	MethodThreadLoadedList       = "thread/loaded/list"
	MethodThreadTurnsList        = "thread/turns/list"
	MethodThreadUnsubscribe      = "thread/unsubscribe"
	MethodThreadArchive          = "thread/archive"
	MethodThreadUnarchive        = "thread/unarchive"
	MethodThreadNameSet          = "thread/name/set"
	MethodThreadSettingsUpdate   = "thread/settings/update"
	MethodThreadReadStateUpdate  = "thread/readState/update"
	MethodTurnStart              = "turn/start"
	MethodTurnSteer              = "turn/steer"
	MethodTurnInterrupt          = "turn/interrupt"
	MethodModelList              = "model/list"
	MethodAccountRead            = "account/read"
	MethodConfigRead             = "config/read"
	MethodConfigRequirementsRead = "configRequirements/read"
	MethodSkillsList             = "skills/list"
	MethodPermissionProfileList  = "permissionProfile/list"
	MethodCollaborationModeList  = "collaborationMode/list"
	MethodCommandExec            = "command/exec"
	MethodCommandExecWrite       = "command/exec/write"
	MethodCommandExecTerminate   = "command/exec/terminate"
	MethodCommandExecResize      = "command/exec/resize"
	MethodFsReadFile             = "fs/readFile"
	MethodFsWriteFile            = "fs/writeFile"
	MethodFsCreateDirectory      = "fs/createDirectory"
	MethodFsGetMetadata          = "fs/getMetadata"
	MethodFsReadDirectory        = "fs/readDirectory"
	MethodFsRemove               = "fs/remove"
	MethodFsCopy                 = "fs/copy"
)

// Typed definitions of the client requests codexd serves: each binds the
// method name to its params and result types, for the server and for
// clients alike.
var (
	Initialize             = jsonrpc.Method[InitializeParams, InitializeResponse](MethodInitialize)
	ThreadStart            = jsonrpc.Method[ThreadStartParams, ThreadStartResponse](MethodThreadStart)
	ThreadResume           = jsonrpc.Method[ThreadResumeParams, ThreadResumeResponse](MethodThreadResume)
	ThreadFork             = jsonrpc.Method[ThreadForkParams, ThreadForkResponse](MethodThreadFork)
	ThreadRead             = jsonrpc.Method[ThreadReadParams, ThreadReadResponse](MethodThreadRead)
	ThreadList             = jsonrpc.Method[ThreadListParams, ThreadListResponse](MethodThreadList)
	ThreadLoadedList       = jsonrpc.Method[ThreadLoadedListParams, ThreadLoadedListResponse](MethodThreadLoadedList)
	ThreadTurnsList        = jsonrpc.Method[ThreadTurnsListParams, ThreadTurnsListResponse](MethodThreadTurnsList)
	ThreadUnsubscribe      = jsonrpc.Method[ThreadIDParams, ThreadUnsubscribeResponse](MethodThreadUnsubscribe)
	ThreadArchive          = jsonrpc.Method[ThreadIDParams, EmptyResponse](MethodThreadArchive)
	ThreadUnarchive        = jsonrpc.Method[ThreadIDParams, ThreadUnarchiveResponse](MethodThreadUnarchive)
	ThreadNameSet          = jsonrpc.Method[ThreadSetNameParams, EmptyResponse](MethodThreadNameSet)
	ThreadSettingsUpdate   = jsonrpc.Method[ThreadSettingsUpdateParams, EmptyResponse](MethodThreadSettingsUpdate)
	ThreadReadStateUpdate  = jsonrpc.Method[ThreadReadStateUpdateParams, ThreadReadStateUpdateResponse](MethodThreadReadStateUpdate)
	TurnStart              = jsonrpc.Method[TurnStartParams, TurnStartResponse](MethodTurnStart)
	TurnSteer              = jsonrpc.Method[TurnSteerParams, TurnSteerResponse](MethodTurnSteer)
	TurnInterrupt          = jsonrpc.Method[TurnInterruptParams, EmptyResponse](MethodTurnInterrupt)
	ModelList              = jsonrpc.Method[ModelListParams, ModelListResponse](MethodModelList)
	AccountRead            = jsonrpc.Method[GetAccountParams, GetAccountResponse](MethodAccountRead)
	ConfigRead             = jsonrpc.Method[ConfigReadParams, ConfigReadResponse](MethodConfigRead)
	ConfigRequirementsRead = jsonrpc.Method[NoParams, ConfigRequirementsReadResponse](MethodConfigRequirementsRead)
	SkillsList             = jsonrpc.Method[SkillsListParams, SkillsListResponse](MethodSkillsList)
	PermissionProfileList  = jsonrpc.Method[PermissionProfileListParams, PermissionProfileListResponse](MethodPermissionProfileList)
	CollaborationModeList  = jsonrpc.Method[CollaborationModeListParams, CollaborationModeListResponse](MethodCollaborationModeList)
	CommandExec            = jsonrpc.Method[CommandExecParams, CommandExecResponse](MethodCommandExec)
	CommandExecWrite       = jsonrpc.Method[CommandExecWriteParams, EmptyResponse](MethodCommandExecWrite)
	CommandExecTerminate   = jsonrpc.Method[CommandExecTerminateParams, EmptyResponse](MethodCommandExecTerminate)
	CommandExecResize      = jsonrpc.Method[CommandExecResizeParams, EmptyResponse](MethodCommandExecResize)
	FsReadFile             = jsonrpc.Method[FsPathParams, FsReadFileResponse](MethodFsReadFile)
	FsWriteFile            = jsonrpc.Method[FsWriteFileParams, EmptyResponse](MethodFsWriteFile)
	FsCreateDirectory      = jsonrpc.Method[FsCreateDirectoryParams, EmptyResponse](MethodFsCreateDirectory)
	FsGetMetadata          = jsonrpc.Method[FsPathParams, FsGetMetadataResponse](MethodFsGetMetadata)
	FsReadDirectory        = jsonrpc.Method[FsPathParams, FsReadDirectoryResponse](MethodFsReadDirectory)
	FsRemove               = jsonrpc.Method[FsRemoveParams, EmptyResponse](MethodFsRemove)
	FsCopy                 = jsonrpc.Method[FsCopyParams, EmptyResponse](MethodFsCopy)
)
