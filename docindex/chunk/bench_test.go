package chunk

import (
	"context"
	"testing"
)

// BenchmarkSplit splits a document of about 20 KB (the end-to-end benchmark's
// file size) with the default options.
func BenchmarkSplit(b *testing.B) {
	sections := []Section{{Page: 1, Text: prose(9, 2000, 20)}, {Page: 2, Text: prose(10, 1500, 15)}}
	for _, s := range []string{StrategyRecursive, StrategyMarkdown} {
		b.Run(s, func(b *testing.B) {
			for b.Loop() {
				if _, err := Split(context.Background(), sections, Options{Strategy: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
