package plugintest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/docindex/docindex/plugins/connector"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/embedders/hash"
	"github.com/docindex/docindex/plugins/llm"
	"github.com/docindex/docindex/plugins/plugintest"
)

// The suites must fail on broken plugins. Each broken case runs in a child
// test process (the helper tests below, which only act when brokenEnv is
// set), and the parent checks that it failed and why.
const brokenEnv = "PLUGINTEST_BROKEN_CASE"

func runBroken(t *testing.T, name string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenHelper$", "-test.v")
	cmd.Env = append(os.Environ(), brokenEnv+"="+name)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the suite passed a broken %s (err %v):\n%s", name, err, out)
	}
	return string(out)
}

func TestEmbedderSuiteCatchesBugs(t *testing.T) {
	out := runBroken(t, "embedder")
	for _, want := range []string{
		"12 dimensions, the model has 16",
		"want an error wrapping embedder.ErrUnknownModel",
		"text alone vs text in a batch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the suite's report lacks %q:\n%s", want, out)
		}
	}
}

func TestConnectorSuiteCatchesBugs(t *testing.T) {
	out := runBroken(t, "connector")
	for _, want := range []string{
		`accepted an invalid configuration`,
		`upserted twice in one sync`,
		`want an error wrapping plugins.ErrNotFound`,
		`unknown capability "teleport"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the suite's report lacks %q:\n%s", want, out)
		}
	}
}

func TestLLMSuiteCatchesBugs(t *testing.T) {
	out := runBroken(t, "llm")
	for _, want := range []string{
		"the answer does not satisfy the requested schema",
		"want an error wrapping llm.ErrUnknownModel",
		"images must not be dropped silently",
		`want "length"`,
		"no messages: got <nil>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the suite's report lacks %q:\n%s", want, out)
		}
	}
}

func TestBrokenHelper(t *testing.T) {
	switch os.Getenv(brokenEnv) {
	case "embedder":
		plugintest.RunEmbedderSuite(t, plugintest.StartEmbedder(t, brokenEmbedder{}))
	case "llm":
		plugintest.RunLLMSuite(t, plugintest.StartLLM(t, brokenLLM{}))
	case "connector":
		plugintest.RunConnectorSuite(t, plugintest.StartConnector(t, brokenConnector{}), plugintest.WithConfig(json.RawMessage(`{}`)))
	}
}

// brokenEmbedder declares 16 dimensions, returns 12 for one model, loses
// the order of batches and answers unknown models with a plain error.
type brokenEmbedder struct{}

func (brokenEmbedder) Models(context.Context) ([]embedder.Model, error) {
	return []embedder.Model{{ID: "wanted-dims", Dimensions: 16}, {ID: "reversed", Dimensions: 16}}, nil
}

func (brokenEmbedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	switch model {
	case "wanted-dims":
		return hash.New(hash.WithDimensions(12)).Embed(ctx, "hash-12", texts)
	case "reversed":
		vecs, err := hash.New(hash.WithDimensions(16)).Embed(ctx, "hash-16", texts)
		for i, j := 0, len(vecs)-1; i < j; i, j = i+1, j-1 {
			vecs[i], vecs[j] = vecs[j], vecs[i]
		}
		return vecs, err
	default:
		return nil, errors.New("no idea")
	}
}

// brokenConnector accepts any configuration, lists an item twice, answers
// a missing item with a plain error and claims a capability nobody knows.
type brokenConnector struct{}

func (brokenConnector) Describe(context.Context) (connector.Description, error) {
	return connector.Description{Type: "broken", Version: "1", DisplayName: "Broken",
		Capabilities: []connector.Capability{"teleport"},
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{}}`)}, nil
}

func (brokenConnector) Validate(context.Context, json.RawMessage) error { return nil }

func (brokenConnector) CheckHealth(context.Context, json.RawMessage) (connector.Health, error) {
	return connector.Health{Status: connector.StatusOK}, nil
}

func (brokenConnector) Sync(context.Context, connector.SyncRequest) iter.Seq2[connector.Event, error] {
	return func(yield func(connector.Event, error) bool) {
		it := connector.Item{ID: "same", Name: "same.txt"}
		if yield(connector.Upsert(it), nil) {
			yield(connector.Upsert(it), nil)
		}
	}
}

func (brokenConnector) Fetch(_ context.Context, req connector.FetchRequest) (*connector.Content, error) {
	if req.Item.ID != "same" {
		return nil, errors.New("whatever")
	}
	return &connector.Content{Size: 2, Body: io.NopCloser(bytes.NewReader([]byte("hi")))}, nil
}

// brokenLLM answers every request with the same prose: it ignores schemas, token limits and
// images, and knows no unknown models nor malformed requests.
type brokenLLM struct{}

func (brokenLLM) Models(context.Context) ([]llm.Model, error) {
	return []llm.Model{{ID: "chatty"}}, nil
}

func (brokenLLM) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: "Sure! Here is a long and friendly answer, whatever you asked for.", FinishReason: "stop"}, nil
}
