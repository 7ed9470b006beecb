package modelclient_test

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/codexd/codexd/config"
	"github.com/codexd/codexd/mockmodel"
	"github.com/codexd/codexd/modelclient"
)

// A turn's model call: stream the response, show text as it comes, and
// keep the finished items for the history.
func ExampleClient_Stream() {
	mock := mockmodel.New(mockmodel.Options{})
	url, _ := mock.Start("127.0.0.1:0")
	defer mock.Close()

	cfg, _ := config.Parse(nil, "", config.LoadOptions{ModelProvider: "mock", Getenv: func(string) string { return "" }})
	p := cfg.Provider
	p.BaseURL = url // the built-in mock provider gets the URL of the mock it starts
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	c, err := modelclient.New(p, modelclient.Options{HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		panic(err)
	}

	s, err := c.Stream(context.Background(), modelclient.Request{
		Model: "mock-model",
		Input: []modelclient.Item{modelclient.Message("user", "MOCK:hello")},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	var history []modelclient.Item
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err) // *APIError, *ResponseError, ErrStreamIdle, ErrStreamCut, ...
		}
		switch e := ev.(type) {
		case modelclient.OutputTextDelta:
			fmt.Printf("delta %q\n", e.Delta)
		case modelclient.OutputItemDone:
			history = append(history, e.Item)
		case modelclient.Completed:
			fmt.Println("completed with usage:", e.Usage != nil)
		}
	}
	fmt.Println(modelclient.Text(history[0].Content))
	// Output:
	// delta "Hello fro"
	// delta "m the moc"
	// delta "k model."
	// completed with usage: true
	// Hello from the mock model.
}
