package chunk

import (
	"strings"
)

// splitMarkdown cuts text at its headings and splits every section like the
// recursive strategy, tagging each piece with its heading path.
//
// langchaingo's MarkdownTextSplitter is not used for the cut: it re-renders
// the Markdown (so chunks are no longer slices of the source and pages cannot
// be traced), drops code blocks unless asked, and lets chunks grow past the
// size by the overlap plus the prepended headings.
func splitMarkdown(text string, o Options) []piece {
	var out []piece
	for _, b := range mdBlocks(text) {
		for _, p := range splitRecursive(text[b.start:b.end], b.start, o.Size, o.Overlap) {
			p.headings = b.headings
			out = append(out, p)
		}
	}
	return out
}

// block is a run of text under one heading path, starting at its heading line.
type block struct {
	start, end int
	bodyStart  int // after the heading line(s)
	headings   []string
}

type heading struct {
	level int
	title string
}

// mdBlocks finds ATX headings ("## Title") and single-line setext headings
// (a paragraph line underlined with === or ---), skipping fenced code, and
// returns the blocks between them. A heading with nothing under it before the
// next heading is merged into the next block, so "# Guide\n## Install\n..."
// gives one chunk with the path [Guide Install] rather than a chunk holding a
// lone title.
func mdBlocks(text string) []block {
	var (
		blocks   []block
		stack    []heading
		cur      = block{headings: []string{}}
		fenceCh  byte
		fenceLen int
		prevPara bool // the previous line can be the text of a setext heading
		prevAt   int
		prevText string
	)
	open := func(at, bodyStart, level int, title string) {
		if at > cur.start {
			cur.end = at
			blocks = append(blocks, cur)
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, heading{level: level, title: title})
		path := make([]string, 0, len(stack))
		for _, h := range stack {
			if h.title != "" {
				path = append(path, h.title)
			}
		}
		cur = block{start: at, bodyStart: bodyStart, headings: path}
	}
	for at := 0; at < len(text); {
		next := strings.IndexByte(text[at:], '\n')
		if next < 0 {
			next = len(text)
		} else {
			next += at + 1
		}
		line := strings.TrimRight(text[at:next], "\r\n")
		switch {
		case fenceLen > 0:
			if ch, n, rest := fence(line); ch == fenceCh && n >= fenceLen && strings.TrimSpace(rest) == "" {
				fenceLen = 0
			}
			prevPara = false
		case fenceStart(line, &fenceCh, &fenceLen):
			prevPara = false
		default:
			if level, title, ok := atxHeading(line); ok {
				open(at, next, level, title)
				prevPara = false
			} else if level := setextUnderline(line); level > 0 && prevPara {
				open(prevAt, next, level, strings.TrimSpace(prevText))
				prevPara = false
			} else {
				prevPara, prevAt, prevText = paragraphLine(line), at, line
			}
		}
		at = next
	}
	cur.end = len(text)
	blocks = append(blocks, cur)

	// Merge heading-only blocks into the block that follows.
	merged := blocks[:0]
	for i, b := range blocks {
		if i+1 < len(blocks) && strings.TrimSpace(text[b.bodyStart:b.end]) == "" {
			blocks[i+1].start = b.start
			continue
		}
		merged = append(merged, b)
	}
	return merged
}

// indent strips up to three leading spaces; four make an indented code line.
func indent(line string) (string, bool) {
	for i := 0; i < 4; i++ {
		if i == len(line) || line[i] != ' ' {
			return line[i:], true
		}
	}
	return line, false
}

// atxHeading parses "## Title ##".
func atxHeading(line string) (int, string, bool) {
	s, ok := indent(line)
	if !ok {
		return 0, "", false
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0, "", false
	}
	title := strings.TrimSpace(s[n:])
	// An optional closing run of #s, when set off by a space, is not part of
	// the title.
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		title = strings.TrimSpace(t)
	}
	return n, title, true
}

// setextUnderline returns 1 for a line of =, 2 for a line of -, else 0.
func setextUnderline(line string) int {
	s, ok := indent(line)
	if !ok {
		return 0
	}
	s = strings.TrimRight(s, " \t")
	switch {
	case s == "":
		return 0
	case strings.Trim(s, "=") == "":
		return 1
	case strings.Trim(s, "-") == "":
		return 2
	}
	return 0
}

// paragraphLine reports whether line is plain paragraph text, the only kind a
// setext underline turns into a heading (a "---" under a list item or a quote
// is a thematic break).
func paragraphLine(line string) bool {
	s, ok := indent(line)
	if !ok || strings.TrimSpace(s) == "" {
		return false
	}
	switch s[0] {
	case '>', '|', '<':
		return false
	case '-', '*', '+':
		return !(len(s) == 1 || s[1] == ' ' || s[1] == '\t')
	}
	// Ordered list items: "1. " or "1) ".
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && (s[i+1] == ' ' || s[i+1] == '\t') {
		return false
	}
	return true
}

// fence splits a possible fence line into its character, run length and the
// rest.
func fence(line string) (byte, int, string) {
	s, ok := indent(line)
	if !ok || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	return s[0], n, s[n:]
}

// fenceStart reports whether line opens a fenced code block and records it.
func fenceStart(line string, ch *byte, n *int) bool {
	c, k, rest := fence(line)
	if k == 0 || (c == '`' && strings.Contains(rest, "`")) {
		return false
	}
	*ch, *n = c, k
	return true
}
