package embedder_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docindex/docindex/plugins/plugintest"
)

// BenchmarkTransport measures the SDK's share of a call: marshalling texts
// and vectors and one gRPC round trip in process, with an embedder that does
// no work (256-dimension vectors for ~1 KB texts).
func BenchmarkTransport(b *testing.B) {
	e := plugintest.StartEmbedder(b, &scripted{embed: constant(256)})
	chunk := strings.Repeat("Plugins run as separate processes and talk gRPC to the server. ", 16)
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			texts := make([]string, n)
			for i := range texts {
				texts[i] = chunk
			}
			for b.Loop() {
				if _, err := e.Embed(context.Background(), "m", texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
