package appproto

// Methods the schema of Codex 0.169 defines for the other directions, in its
// order. codexd sends the notifications and requests that have a
// definition in this package; the lists say what exists.

// ServerNotificationMethods lists every server-to-client notification.
var ServerNotificationMethods = []string{
	"error", "thread/started", "thread/status/changed",
	"thread/readState/changed", "thread/archived", "thread/deleted",
	"thread/unarchived", "thread/closed", "thread/reverted",
	"skills/changed", "thread/name/updated", "thread/section/changed",
	"thread/attachment/updated", "thread/goal/updated", "thread/prediction/updated",
	"thread/goal/cleared", "thread/queue/changed", "project/changed",
	"thread/project/updated", "thread/environment/connected", "thread/environment/disconnected",
	"thread/settings/updated", "thread/tokenUsage/updated", "turn/started",
	"hook/started", "turn/completed", "hook/completed",
	"turn/diff/updated", "turn/plan/updated", "item/started",
	"item/autoApprovalReview/started", "item/autoApprovalReview/completed", "autoApprovalReview/strictReviewRequired",
	"item/completed", "item/agentMessage/delta", "item/plan/delta",
	"command/exec/outputDelta", "process/outputDelta", "process/exited",
	"item/commandExecution/outputDelta", "item/commandExecution/terminalInteraction", "item/fileChange/outputDelta",
	"item/fileChange/patchUpdated", "serverRequest/resolved", "item/mcpToolCall/progress",
	"mcpServer/oauthLogin/completed", "mcpServer/startupStatus/updated", "mcpServer/event/stream/notification",
	"account/updated", "account/gatewayOAuth/changed", "account/rateLimits/updated",
	"app/list/updated", "remoteControl/status/changed", "externalAgentConfig/import/progress",
	"externalAgentConfig/import/completed", "fs/changed", "item/reasoning/summaryTextDelta",
	"item/reasoning/summaryPartAdded", "item/reasoning/textDelta", "thread/compacted",
	"model/rerouted", "model/verification", "modelProvider/authRecoveryStarted",
	"modelProvider/authRecoveryCompleted", "turn/moderationMetadata", "model/safetyBuffering/updated",
	"warning", "guardianWarning", "deprecationNotice",
	"configWarning", "fuzzyFileSearch/sessionUpdated", "fuzzyFileSearch/sessionCompleted",
	"thread/realtime/started", "thread/realtime/itemAdded", "thread/realtime/item/started",
	"thread/realtime/item/transcript/delta", "thread/realtime/item/completed", "thread/realtime/transcript/delta",
	"thread/realtime/transcript/done", "thread/realtime/outputAudio/delta", "thread/realtime/sdp",
	"thread/realtime/error", "thread/realtime/closed", "windows/worldWritableWarning",
	"windowsSandbox/setupCompleted", "account/login/completed",
}

// ServerRequestMethods lists every server-to-client request.
var ServerRequestMethods = []string{
	"item/commandExecution/requestApproval", "item/fileChange/requestApproval", "item/tool/requestUserInput",
	"mcpServer/elicitation/request", "item/permissions/requestApproval", "item/tool/call",
	"account/chatgptAuthTokens/refresh", "attestation/generate", "currentTime/read",
	"applyPatchApproval", "execCommandApproval",
}

// ClientNotificationMethods lists every client-to-server notification.
var ClientNotificationMethods = []string{
	"initialized",
}
