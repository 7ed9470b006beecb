package appproto

import (
	"fmt"
	"strings"
)

// ClientMethods lists every client-to-server method of Codex 0.169, in the
// order Codex's decoder names them in its "unknown variant" error (the
// schema's order, plus three legacy v1 methods the schema no longer lists).
var ClientMethods = []string{
	"initialize", "server/diagnostics", "userVerification/status",
	"userVerification/enroll", "userVerification/delete", "userVerification/verify",
	"userVerification/cancel", "thread/start", "thread/resume",
	"thread/fork", "thread/sample", "thread/sample/cancel",
	"thread/archive", "thread/delete", "thread/unsubscribe",
	"thread/increment_elicitation", "thread/decrement_elicitation", "thread/name/set",
	"thread/prediction/request", "thread/goal/set", "thread/goal/get",
	"thread/goal/clear", "thread/queue/add", "thread/queue/list",
	"thread/queue/update", "thread/queue/delete", "thread/queue/reorder",
	"thread/queue/start", "thread/metadata/update", "thread/attachment/add",
	"thread/attachment/list", "thread/attachmentOwner/list", "thread/attachment/remove",
	"thread/section/move", "thread/settings/update", "thread/memoryMode/set",
	"thread/memory/read", "memory/status", "memory/reset",
	"rollout/compress", "thread/unarchive", "thread/compact/start",
	"thread/shellCommand", "thread/approveGuardianDeniedAction", "thread/backgroundTerminals/clean",
	"thread/backgroundTerminals/list", "thread/backgroundTerminals/terminate", "thread/revert",
	"thread/list", "project/list", "project/read",
	"project/create", "project/import", "project/update",
	"project/move", "project/delete", "threadSection/list",
	"threadSection/create", "threadSection/update", "threadSection/delete",
	"thread/search", "thread/searchOccurrences", "thread/loaded/list",
	"thread/read", "thread/readState/update", "thread/turns/list",
	"thread/items/list", "thread/items/read", "thread/guardianReview",
	"thread/inject_items", "thread/prepareApprovedPlan", "skills/list",
	"skills/extraRoots/set", "hooks/list", "marketplace/add",
	"marketplace/remove", "marketplace/upgrade", "plugin/list",
	"plugin/search", "plugin/installed", "plugin/reconcile",
	"plugin/read", "plugin/skill/read", "plugin/share/save",
	"plugin/share/updateTargets", "plugin/share/list", "plugin/share/checkout",
	"plugin/share/delete", "app/read", "app/list",
	"app/installed", "fs/readFile", "fs/writeFile",
	"fs/createDirectory", "fs/getMetadata", "fs/readDirectory",
	"fs/remove", "fs/copy", "fs/watch",
	"fs/unwatch", "skills/config/write", "plugin/install",
	"plugin/uninstall", "turn/start", "turn/settings/update",
	"turn/steer", "turn/interrupt", "thread/realtime/start",
	"thread/realtime/appendAudio", "thread/realtime/appendText", "thread/realtime/appendSpeech",
	"thread/realtime/stop", "thread/timeline/list", "thread/realtime/listVoices",
	"review/start", "model/list", "account/gatewayOAuth/read",
	"account/gatewayOAuth/login", "account/gatewayOAuth/cancel", "modelProvider/list",
	"modelProvider/config/write", "modelProvider/capabilities/read", "experimentalFeature/list",
	"permissionProfile/list", "experimentalFeature/enablement/set", "remoteControl/enable",
	"remoteControl/disable", "remoteControl/status/read", "remoteControl/pairing/start",
	"remoteControl/pairing/status", "remoteControl/client/list", "remoteControl/client/revoke",
	"collaborationMode/list", "mock/experimentalMethod", "environment/add",
	"environment/info", "environment/status", "mcpServer/oauth/login",
	"config/mcpServer/reload", "mcpServerStatus/list", "mcpServer/resource/read",
	"mcpServer/event/stream/start", "mcpServer/event/stream/stop", "mcpServer/tool/call",
	"windowsSandbox/setupStart", "windowsSandbox/readiness", "account/login/start",
	"account/bedrock/discover", "account/bedrock/setup", "account/gcp/setup",
	"account/bedrock/checkGovCloudRequirements", "account/login/cancel", "accountSession/list",
	"accountSession/switch", "account/logout", "account/securitySetup/read",
	"account/rateLimits/read", "account/rateLimitResetCredit/consume", "account/usage/read",
	"account/workspaceMessages/read", "account/sendAddCreditsNudgeEmail", "feedback/upload",
	"feedback/save", "command/exec", "command/exec/write",
	"command/exec/terminate", "command/exec/resize", "process/spawn",
	"process/writeStdin", "process/kill", "process/resizePty",
	"config/read", "externalAgentConfig/detect", "externalAgentConfig/import",
	"externalAgentConfig/import/recordHistory", "externalAgentConfig/import/readHistories", "config/value/write",
	"config/batchWrite", "configRequirements/read", "account/read",
	"getConversationSummary", "gitDiffToRemote", "getAuthStatus",
	"fuzzyFileSearch", "fuzzyFileSearch/sessionStart", "fuzzyFileSearch/sessionUpdate",
	"fuzzyFileSearch/sessionStop",
}

// experimentalMethods are the methods missing from the schema Codex
// generates without --experimental: they need capabilities.experimentalApi.
var experimentalMethods = map[string]bool{
	"server/diagnostics": true, "userVerification/status": true, "userVerification/enroll": true,
	"userVerification/delete": true, "userVerification/verify": true, "userVerification/cancel": true,
	"thread/sample": true, "thread/sample/cancel": true, "thread/increment_elicitation": true,
	"thread/decrement_elicitation": true, "thread/prediction/request": true, "thread/queue/add": true,
	"thread/queue/list": true, "thread/queue/update": true, "thread/queue/delete": true,
	"thread/queue/reorder": true, "thread/queue/start": true, "thread/settings/update": true,
	"thread/memoryMode/set": true, "thread/memory/read": true, "memory/status": true,
	"memory/reset": true, "rollout/compress": true, "thread/backgroundTerminals/clean": true,
	"thread/backgroundTerminals/list": true, "thread/backgroundTerminals/terminate": true, "project/list": true,
	"project/read": true, "project/create": true, "project/import": true,
	"project/update": true, "project/move": true, "project/delete": true,
	"thread/search": true, "thread/searchOccurrences": true, "thread/readState/update": true,
	"thread/items/read": true, "thread/guardianReview": true, "thread/prepareApprovedPlan": true,
	"plugin/search": true, "turn/settings/update": true, "thread/realtime/start": true,
	"thread/realtime/appendAudio": true, "thread/realtime/appendText": true, "thread/realtime/appendSpeech": true,
	"thread/realtime/stop": true, "thread/timeline/list": true, "thread/realtime/listVoices": true,
	"remoteControl/enable": true, "remoteControl/disable": true, "remoteControl/status/read": true,
	"remoteControl/pairing/start": true, "remoteControl/pairing/status": true, "remoteControl/client/list": true,
	"remoteControl/client/revoke": true, "collaborationMode/list": true, "mock/experimentalMethod": true,
	"environment/add": true, "environment/info": true, "environment/status": true,
	"mcpServer/event/stream/start": true, "mcpServer/event/stream/stop": true, "account/bedrock/discover": true,
	"account/bedrock/setup": true, "account/gcp/setup": true, "account/bedrock/checkGovCloudRequirements": true,
	"accountSession/list": true, "accountSession/switch": true, "process/spawn": true,
	"process/writeStdin": true, "process/kill": true, "process/resizePty": true,
	"fuzzyFileSearch/sessionStart": true, "fuzzyFileSearch/sessionUpdate": true, "fuzzyFileSearch/sessionStop": true,
}

// IsClientMethod reports whether Codex knows method as a client request.
func IsClientMethod(method string) bool {
	_, ok := clientMethodSet[method]
	return ok
}

// IsExperimentalMethod reports whether method needs the experimentalApi
// capability.
func IsExperimentalMethod(method string) bool { return experimentalMethods[method] }

// IsExperimentalNotification reports whether Codex sends notifications
// of method only to clients with the experimentalApi capability (as
// observed of Codex 0.169).
func IsExperimentalNotification(method string) bool { return experimentalNotifications[method] }

var experimentalNotifications = map[string]bool{"thread/readState/changed": true, "thread/settings/updated": true}

var clientMethodSet = func() map[string]struct{} {
	m := make(map[string]struct{}, len(ClientMethods))
	for _, name := range ClientMethods {
		m[name] = struct{}{}
	}
	return m
}()

// UnknownMethodMessage is Codex's message for a request whose method it
// does not know, without the "Invalid request: " prefix.
func UnknownMethodMessage(method string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown variant `%s`, expected one of ", method)
	for i, name := range ClientMethods {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`")
		b.WriteString(name)
		b.WriteString("`")
	}
	return b.String()
}

// ExperimentalMessage is Codex's message for an experimental method or
// field used without the capability; reason is the method name, or
// "method.field".
func ExperimentalMessage(reason string) string {
	return reason + " requires experimentalApi capability"
}
