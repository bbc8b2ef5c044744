package extract

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	for _, p := range strings.Split(os.Getenv("PDFS"), ",") {
		for _, e := range []*Extractor{New(), New(WithPdftotext(""))} {
			start := time.Now()
			d, err := e.Extract(context.Background(), p, "w.pdf", "")
			if err != nil {
				fmt.Println("ERR", p, err)
				continue
			}
			words := len(strings.Fields(d.Text()))
			fmt.Printf("%s poppler=%v pages=%d/%d words=%d warns=%q %v title=%q\n", p, e.UsesPdftotext(), len(d.Pages), d.PageCount, words, d.Warnings, time.Since(start), d.Title)
			if len(d.Pages) > 1 {
				os.WriteFile(fmt.Sprintf("/tmp/out-%v-%d.txt", e.UsesPdftotext(), len(p)), []byte(d.Text()), 0o644)
			}
		}
	}
}
