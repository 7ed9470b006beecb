package environment

import (
	"os"

	"github.com/codexd/codexd/execclient"
	"github.com/codexd/codexd/execserver"
)

// EnvURL names the environment variable of a remote exec-server that
// stands in for `local`, as in Codex.
const EnvURL = "CODEX_EXEC_SERVER_URL"

// InProcess starts an exec-server in this process and returns its
// connector; closing the connector stops the server.
func InProcess(cfg execserver.Config, opts execclient.Options) (*execclient.Connector, error) {
	srv, err := execserver.New(cfg)
	if err != nil {
		return nil, err
	}
	if opts.ClientName == "" {
		opts.ClientName = "codexd-core"
	}
	return execclient.InProcessConnector(srv, opts), nil
}

// LocalFromFlag is the connector of `local`: the exec-server at url if
// given, else at $CODEX_EXEC_SERVER_URL, else one in this process.
func LocalFromFlag(url string, cfg execserver.Config, opts execclient.Options) (*execclient.Connector, error) {
	if url == "" {
		url = os.Getenv(EnvURL)
	}
	if opts.ClientName == "" {
		opts.ClientName = "codexd-core"
	}
	if url != "" {
		return execclient.URLConnector(url, opts)
	}
	return InProcess(cfg, opts)
}
