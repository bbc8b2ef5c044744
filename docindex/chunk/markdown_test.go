package chunk

import (
	"slices"
	"strings"
	"testing"
)

const guide = `Intro text before any heading.

# Guide
## Install

Run the installer.

### Linux ###

Use the package manager:

` + "```sh\n# not a heading, a shell comment\napt-get install docindex\n```" + `

## Usage
Start the server and open the page.

    # indented code, not a heading

Appendix
========

Extra notes live here.

- a list item
---

#NoSpace is not a heading either.
`

func headingsOf(t *testing.T, c Chunk) []string {
	t.Helper()
	h, ok := c.Metadata["headings"].([]string)
	if !ok {
		t.Fatalf("chunk %d: metadata headings is %T, want []string", c.Ordinal, c.Metadata["headings"])
	}
	return h
}

func TestMarkdownHeadingPaths(t *testing.T) {
	chunks, _ := splitChecked(t, []Section{{Text: guide}}, Options{Strategy: StrategyMarkdown}, DefaultSize)
	want := []struct {
		start    string
		headings []string
	}{
		{"Intro text", []string{}},
		// "# Guide" has nothing under it before "## Install": one chunk.
		{"# Guide\n## Install\n\nRun the installer.", []string{"Guide", "Install"}},
		{"### Linux ###", []string{"Guide", "Install", "Linux"}},
		{"## Usage", []string{"Guide", "Usage"}},
		{"Appendix\n========", []string{"Appendix"}},
	}
	if len(chunks) != len(want) {
		for _, c := range chunks {
			t.Logf("%d %v %q", c.Ordinal, c.Metadata["headings"], c.Text)
		}
		t.Fatalf("%d chunks, want %d", len(chunks), len(want))
	}
	for i, w := range want {
		c := chunks[i]
		if !strings.HasPrefix(c.Text, w.start) {
			t.Errorf("chunk %d starts %q, want %q", i, c.Text[:min(len(c.Text), 40)], w.start)
		}
		if got := headingsOf(t, c); !slices.Equal(got, w.headings) {
			t.Errorf("chunk %d: headings %q, want %q", i, got, w.headings)
		}
	}
	// What looks like headings inside code, after a list item and without a
	// space stays in the body of its section.
	for _, s := range []string{"# not a heading", "    # indented code", "- a list item\n---", "#NoSpace"} {
		found := false
		for _, c := range chunks {
			found = found || strings.Contains(c.Text, s)
		}
		if !found {
			t.Errorf("%q is missing from the chunks", s)
		}
	}
	if !strings.Contains(chunks[2].Text, "apt-get install docindex") {
		t.Errorf("the code block is not in the Linux chunk: %q", chunks[2].Text)
	}
}

func TestMarkdownLongSection(t *testing.T) {
	text := "# Book\n\n## Chapter one\n\n" + prose(5, 900, 6) + "\n\n## Chapter two\n\n" + prose(6, 200, 1)
	chunks, ranges := splitChecked(t, []Section{{Text: text}}, Options{Strategy: StrategyMarkdown, Size: 80, Overlap: 20}, 80)
	one, two := 0, 0
	for i, c := range chunks {
		switch h := headingsOf(t, c); {
		case slices.Equal(h, []string{"Book", "Chapter one"}):
			one++
			if two > 0 {
				t.Errorf("chunk %d of chapter one after chapter two", i)
			}
		case slices.Equal(h, []string{"Book", "Chapter two"}):
			two++
		default:
			t.Errorf("chunk %d: headings %q", i, h)
		}
	}
	if one < 5 || two < 2 {
		t.Errorf("%d chunks in chapter one, %d in chapter two: long sections are not split", one, two)
	}
	// No chunk crosses a heading: chapter two's first chunk starts at it.
	for i, c := range chunks {
		if strings.Contains(c.Text, "## Chapter two") && !strings.HasPrefix(c.Text, "## Chapter two") {
			t.Errorf("chunk %d crosses the heading: %q", i, c.Text)
		}
	}
	// Overlap applies inside a section.
	shared := 0
	for i := 1; i < len(ranges); i++ {
		if ranges[i][0] < ranges[i-1][1] {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no overlap between chunks of a long section")
	}
}

func TestMarkdownTrailingHeading(t *testing.T) {
	chunks, _ := splitChecked(t, []Section{{Text: "Body.\n\n## Empty at the end"}}, Options{Strategy: StrategyMarkdown}, DefaultSize)
	if len(chunks) != 2 || chunks[1].Text != "## Empty at the end" || !slices.Equal(headingsOf(t, chunks[1]), []string{"Empty at the end"}) {
		t.Errorf("chunks %+v: a last heading with no body keeps its own chunk", chunks)
	}
}
