package pluginhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docindex/docindex/docindex/pluginhost"
	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/llm"
	"github.com/docindex/docindex/plugins/llms/openai"
	"github.com/docindex/docindex/plugins/llms/openai/openaitest"
	"github.com/docindex/docindex/plugins/plugintest"
)

// llmEnv configures the docindex-llm-openai binary for f: "mini" (gpt-4o-mini, vision) and
// gpt-3.5-turbo.
func llmEnv(prefix string, f *openaitest.Server) pluginhost.Option {
	return pluginhost.WithEnv(
		prefix+"BASE_URL="+f.BaseURL(),
		prefix+"API_KEY="+f.Key(),
		prefix+`MODELS=[{"id":"mini","name":"gpt-4o-mini","contextTokens":128000},{"id":"gpt-3.5-turbo"}]`,
		prefix+"VISION_MODELS=mini",
		prefix+"MAX_RETRIES=2",
	)
}

func testPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	must(t, png.Encode(&buf, image.NewGray(image.Rect(0, 0, 20, 10))))
	return buf.Bytes()
}

// TestLLMPluginThroughProcess runs the real docindex-llm-openai binary against a server in
// OpenAI's published shapes, configured through the environment as the server does it.
func TestLLMPluginThroughProcess(t *testing.T) {
	f := openaitest.New(t)
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(pluginDir(t, "docindex-llm-openai", "docindex-embedder-hash")), llmEnv(openai.DefaultEnvPrefix, f))
	ctx := context.Background()

	infos := h.Plugins()
	if len(infos) != 2 || infos[0].Kind != plugins.KindEmbedder {
		t.Fatalf("plugins = %+v", infos)
	}
	lp := infos[1]
	wantModels := []llm.Model{{ID: "mini", Provider: "openai", Vision: true, ContextTokens: 128000}, {ID: "gpt-3.5-turbo", Provider: "openai"}}
	if lp.Name != "openai" || lp.Kind != plugins.KindLLM || lp.Status != pluginhost.StatusRunning || lp.PID <= 0 ||
		lp.Protocol != llm.ProtocolVersion || lp.Version != plugins.SDKVersion || lp.SDKVersion != plugins.SDKVersion || lp.Error != "" ||
		!slices.Equal(lp.Capabilities, []string{"mini", "gpt-3.5-turbo"}) || !reflect.DeepEqual(lp.LLMModels, wantModels) {
		t.Errorf("llm plugin info = %+v", lp)
	}
	models, err := h.LLMModels(ctx)
	if err != nil || !reflect.DeepEqual(models, wantModels) {
		t.Errorf("LLMModels = %+v, %v", models, err)
	}
	if emb, _ := h.Models(ctx); len(emb) != 2 {
		t.Errorf("the embedding catalog changed: %+v", emb)
	}

	// Vision and structured output through the process.
	schema := `{"type":"object","properties":{"caption":{"type":"string"},"objects":{"type":"array","items":{"type":"string"}}},"required":["caption"]}`
	resp, err := h.Complete(ctx, llm.Request{Model: "mini", SchemaName: "picture", Schema: json.RawMessage(schema), Messages: []llm.Message{
		{Role: "system", Content: "Describe the image."},
		{Role: "user", Content: "Page 3 of the report.", Images: []llm.Image{{ContentType: "image/png", Data: testPNG(t)}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(resp.Content), &doc); err != nil || doc["caption"] == nil || resp.FinishReason != "stop" || resp.InputTokens == 0 || resp.OutputTokens == 0 {
		t.Errorf("structured answer: %+v (%v)", resp, err)
	}
	reqs := f.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gpt-4o-mini" || len(reqs[0].Messages[1].Images) != 1 || reqs[0].Messages[1].Images[0].Width != 20 ||
		reqs[0].ResponseFormat == nil || reqs[0].ResponseFormat.JSONSchema.Name != "picture" || !*reqs[0].ResponseFormat.JSONSchema.Strict {
		t.Errorf("what reached the server: %+v", reqs)
	}

	// A large image (past gRPC's default 4 MiB) crosses the process boundary intact.
	big := append(testPNG(t), bytes.Repeat([]byte("padding "), 1<<20)...) // 8 MiB; the header still decodes
	if _, err := h.Complete(ctx, llm.Request{Model: "mini", Messages: []llm.Message{{Role: "user", Content: "Scan", Images: []llm.Image{{ContentType: "image/png", Data: big}}}}}); err != nil {
		t.Fatalf("8 MiB image: %v", err)
	}
	if reqs := f.Requests(); len(reqs) != 2 || !bytes.Equal(reqs[1].Messages[0].Images[0].Data, big) {
		t.Errorf("the large image did not arrive intact")
	}

	// The host's own checks, before any request.
	_, err = h.Complete(ctx, llm.Request{Model: "gpt-3.5-turbo", Messages: []llm.Message{{Role: "user", Content: "Look", Images: []llm.Image{{Data: testPNG(t)}}}}})
	if !errors.Is(err, plugins.ErrInvalidArgument) || !strings.Contains(err.Error(), "does not accept images") {
		t.Errorf("image for a text model: %v", err)
	}
	_, err = h.Complete(ctx, llm.Request{Model: "gpt-9", Messages: []llm.Message{{Role: "user", Content: "Hi"}}})
	if !errors.Is(err, pluginhost.ErrUnknownLLMModel) || !errors.Is(err, llm.ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if n := len(f.Requests()); n != 2 {
		t.Errorf("%d requests reached the server, want 2", n)
	}

	// The plugin's errors keep their meaning through the host.
	f.Push(openaitest.ErrorReply(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."))
	_, err = h.Complete(ctx, llm.Request{Model: "mini", Messages: []llm.Message{{Role: "user", Content: "Hi"}}})
	if !errors.Is(err, plugins.ErrUnauthenticated) || !strings.Contains(err.Error(), "Incorrect API key provided.") || !strings.Contains(err.Error(), "provider openai") {
		t.Errorf("401 through the host: %v", err)
	}
}

func TestHostPassesTheLLMSuite(t *testing.T) {
	f := openaitest.New(t)
	h := startHost(t, newRecorder(t), pluginhost.WithDir(pluginDir(t, "docindex-llm-openai")), llmEnv(openai.DefaultEnvPrefix, f))
	plugintest.RunLLMSuite(t, h.LLM())
}

// TestLLMPluginCopiesAndConfiguration runs the binary under a second name, which reads its
// own variables, next to an unconfigured copy, which is reported and offers nothing.
func TestLLMPluginCopiesAndConfiguration(t *testing.T) {
	f := openaitest.New(t)
	dir := t.TempDir()
	for _, name := range []string{"docindex-llm-local", "docindex-llm-openai"} {
		must(t, os.Symlink(filepath.Join(binDir, "docindex-llm-openai"), filepath.Join(dir, name)))
	}
	h := startHost(t, newRecorder(t), pluginhost.WithDir(dir), pluginhost.WithModelRetry(50*time.Millisecond), llmEnv("DOCINDEX_LLM_LOCAL_", f),
		pluginhost.WithEnv("OPENAI_API_KEY="))
	models, err := h.LLMModels(context.Background())
	if err != nil || len(models) != 2 || models[0].Provider != "local" {
		t.Fatalf("models = %+v, %v", models, err)
	}
	op := pluginInfo(t, h, "openai")
	if op.Status != pluginhost.StatusRunning || len(op.LLMModels) != 0 || !strings.Contains(op.Error, "DOCINDEX_LLM_OPENAI_API_KEY") {
		t.Errorf("unconfigured copy: %+v", op)
	}
	resp, err := h.Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: []llm.Message{{Role: "user", Content: "Hi"}}})
	if err != nil || !strings.HasPrefix(resp.Content, "You said: Hi") {
		t.Errorf("through the copy: %+v %v", resp, err)
	}

	// In process wins over the binary of the same name.
	h2 := pluginhost.New(pluginhost.WithDir(dir), pluginhost.WithLogger(slog.New(newRecorder(t))), llmEnv("DOCINDEX_LLM_LOCAL_", f))
	h2.RegisterLLM("local", openai.New(openai.WithBaseURL(f.BaseURL()), openai.WithAPIKey(f.Key()), openai.WithModels(openai.Model{ID: "gpt-3.5-turbo"})))
	must(t, h2.Start(context.Background()))
	defer h2.Close()
	lp := pluginInfo(t, h2, "local")
	if lp.Status != pluginhost.StatusInProcess || lp.Version != plugins.SDKVersion || !slices.Equal(lp.Capabilities, []string{"gpt-3.5-turbo"}) {
		t.Errorf("in-process provider: %+v", lp)
	}
	if resp, err := h2.LLM().Complete(context.Background(), llm.Request{Model: "gpt-3.5-turbo", Messages: []llm.Message{{Role: "user", Content: "Hi"}}}); err != nil || resp.Content == "" {
		t.Errorf("in process: %+v %v", resp, err)
	}
}

// TestKilledLLMPluginIsRestartedAndCallsRetried kills the LLM process with SIGKILL while
// completions are in flight: every call must still succeed.
func TestKilledLLMPluginIsRestartedAndCallsRetried(t *testing.T) {
	// Slow answers, so that calls are in flight when the process dies.
	f := openaitest.New(t, openaitest.WithAnswer(func(r *openaitest.Request) openaitest.Answer {
		time.Sleep(30 * time.Millisecond)
		return openaitest.DefaultAnswer(r)
	}))
	rec := newRecorder(t)
	h := startHost(t, rec, pluginhost.WithDir(pluginDir(t, "docindex-llm-openai")), llmEnv(openai.DefaultEnvPrefix, f))
	before := pluginInfo(t, h, "openai")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var calls, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := h.Complete(ctx, llm.Request{Model: "mini", Messages: []llm.Message{{Role: "user", Content: "Call from worker " + string(rune('A'+g))}}})
				calls.Add(1)
				if err != nil || !strings.Contains(resp.Content, "worker "+string(rune('A'+g))) {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	atBefore := calls.Load()
	must(t, syscall.Kill(before.PID, syscall.SIGKILL))
	deadline := time.Now().Add(10 * time.Second)
	for calls.Load() < atBefore+40 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d calls failed across the kill; first: %v", n, calls.Load(), firstErr.Load())
	}
	after := pluginInfo(t, h, "openai")
	if after.PID == before.PID || after.PID <= 0 || after.Restarts != 1 || after.Status != pluginhost.StatusRunning || len(after.LLMModels) != 2 {
		t.Errorf("after the kill: %+v (pid before %d)", after, before.PID)
	}
	if _, ok := rec.find("plugin process exited; restarting it", map[string]string{"plugin": "openai", "kind": "llm"}); !ok {
		t.Errorf("the restart was not logged:\n%s", rec.dump())
	}
	if !processGone(before.PID) {
		t.Errorf("the killed process %d is still there", before.PID)
	}
	_, retried := rec.find("retrying", map[string]string{"plugin": "openai"})
	t.Logf("%d calls, %d after the kill; a call was retried: %v", calls.Load(), calls.Load()-atBefore, retried)
}
