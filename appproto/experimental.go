package appproto

import "github.com/go-json-experiment/json/jsontext"

// ExperimentalReason returns why a request needs the experimentalApi
// capability, in Codex's words ("thread/memoryMode/set",
// "thread/start.dynamicTools", "askForApproval.granular"), or "" when it
// does not. params is the decoded params (a pointer or a value).
func ExperimentalReason(method string, params any) string {
	if IsExperimentalMethod(method) {
		return method
	}
	field := ""
	approval := func(a *AskForApproval) {
		if field == "" && a != nil && a.IsGranular() {
			field = "askForApproval.granular"
		}
	}
	switch p := deref(params).(type) {
	case ThreadStartParams:
		field = firstSet(method,
			"allowProviderModelFallback", p.AllowProviderModelFallback != nil,
			"daybreakEnabled", p.DaybreakEnabled != nil,
			"dynamicTools", present(p.DynamicTools),
			"environments", present(p.Environments),
			"experimentalRawEvents", p.ExperimentalRawEvents != nil && *p.ExperimentalRawEvents,
			"historyMode", p.HistoryMode != nil,
			"mockExperimentalField", p.MockExperimentalField != nil,
			"multiAgentMode", p.MultiAgentMode != nil,
			"permissions", p.Permissions != nil,
			"projectId", p.ProjectID != nil,
			"runtimeWorkspaceRoots", p.RuntimeWorkspaceRoots != nil,
			"selectedCapabilityRoots", present(p.SelectedCapabilityRoots))
		approval(p.ApprovalPolicy)
	case ThreadResumeParams:
		field = firstSet(method,
			"history", present(p.History),
			"initialTurnsPage", present(p.InitialTurnsPage),
			"path", p.Path != nil,
			"permissions", p.Permissions != nil,
			"runtimeWorkspaceRoots", p.RuntimeWorkspaceRoots != nil)
		approval(p.ApprovalPolicy)
	case ThreadForkParams:
		field = firstSet(method,
			"attachToSource", p.AttachToSource != nil,
			"beforeTurnId", p.BeforeTurnID != nil,
			"deferGoalContinuation", p.DeferGoalContinuation != nil,
			"experimentalDisablePredictionMcp", p.ExperimentalDisablePredictionMcp != nil,
			"experimentalPredictionMode", p.ExperimentalPredictionMode != nil,
			"path", p.Path != nil,
			"permissions", p.Permissions != nil,
			"runtimeWorkspaceRoots", p.RuntimeWorkspaceRoots != nil)
		approval(p.ApprovalPolicy)
	case ThreadListParams:
		field = firstSet(method,
			"ancestorThreadId", p.AncestorThreadID != nil,
			"attachedToThreadId", p.AttachedToThreadID != nil,
			"includeAttachedThreads", p.IncludeAttachedThreads != nil,
			"parentThreadId", p.ParentThreadID != nil,
			"projectId", p.ProjectID != nil)
	case ThreadSettingsUpdateParams:
		approval(p.ApprovalPolicy)
	case TurnStartParams:
		field = firstSet(method,
			"additionalContext", present(p.AdditionalContext),
			"collaborationMode", p.CollaborationMode != nil,
			"cyberAccessProgram", present(p.CyberAccessProgram),
			"environments", present(p.Environments),
			"multiAgentMode", p.MultiAgentMode != nil,
			"permissions", p.Permissions != nil,
			"responsesapiClientMetadata", present(p.ResponsesapiClientMetadata),
			"responsesapiClientMetadataPatch", present(p.ResponsesapiClientMetadataPatch),
			"runtimeWorkspaceRoots", p.RuntimeWorkspaceRoots != nil)
		approval(p.ApprovalPolicy)
	case TurnSteerParams:
		field = firstSet(method,
			"additionalContext", present(p.AdditionalContext),
			"responsesapiClientMetadata", present(p.ResponsesapiClientMetadata),
			"responsesapiClientMetadataPatch", present(p.ResponsesapiClientMetadataPatch))
	case CommandExecParams:
		field = firstSet(method, "permissionProfile", p.PermissionProfile != nil)
	}
	return field
}

func deref(v any) any {
	switch p := v.(type) {
	case *ThreadStartParams:
		return *p
	case *ThreadResumeParams:
		return *p
	case *ThreadForkParams:
		return *p
	case *ThreadListParams:
		return *p
	case *ThreadSettingsUpdateParams:
		return *p
	case *TurnStartParams:
		return *p
	case *TurnSteerParams:
		return *p
	case *CommandExecParams:
		return *p
	}
	return v
}

// present reports whether an optional raw member was given and not null.
func present(v jsontext.Value) bool { return v != nil && string(v) != "null" }

// firstSet takes (name, set) pairs and returns "method.name" for the first
// set one.
func firstSet(method string, pairs ...any) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			return method + "." + pairs[i].(string)
		}
	}
	return ""
}
