// Package environment is the registry of the exec-servers an app-server's
// threads run their tools on, by environment id, as Codex 0.169 names
// them: `local` is an exec-server inside this process; the others are
// remote exec-servers, declared in $CODEX_HOME/environments.toml (see
// LoadFile) or added at run time (environment/add).
//
// Each environment is an execclient.Connector and at most one live
// execclient.Client, made on first use and shared by every thread on it;
// the client resumes its session across dropped connections, and the
// registry reports each drop and resume to its watchers (the app-server
// turns them into thread/environment/disconnected and connected). When a
// session is lost for good (the exec-server restarted and refuses to
// resume it, or every resume failed), the processes of that session fail
// with execclient.ErrSessionLost and the registry opens a fresh session in
// the background, retrying with backoff until the exec-server answers or
// the registry closes, and reports it as connected.
//
// It only connects and reports: it must never hold agent logic (turns,
// tools, approvals), know JSON-RPC beyond what execclient exposes, or
// start or recover anything when asked only for a status.
package environment
