package appproto

import "github.com/codexd/codexd/jsonrpc"

// Method names of thread/delete and thread/revert.
const (
	MethodThreadDelete = "thread/delete"
)

// ThreadDelete removes a stored thread ({threadId} → {}); the server then
// sends thread/deleted to every connection.
var ThreadDelete = jsonrpc.Method[ThreadIDParams, EmptyResponse](MethodThreadDelete)

// ThreadDeleted says a thread was deleted.
var ThreadDeleted = jsonrpc.Notification[ThreadIDNotification]("thread/deleted")
