package chunk

import (
	"strings"
	"unicode/utf8"
)

// separators are tried in order: paragraphs, lines, words, characters.
var separators = []string{"\n\n", "\n", " ", ""}

// splitRecursive splits text (which starts at byte base of the joined text)
// and returns the pieces as byte ranges of the joined text, none above size
// tokens.
//
// The algorithm is LangChain's recursive character splitter, as in
// github.com/tmc/langchaingo/textsplitter (RecursiveCharacter with
// KeepSeparator): cut on the first separator the text contains, merge the
// pieces up to size, carry up to overlap tokens of trailing pieces into the
// next chunk, and cut pieces that are too large with the next separator. It
// is ported rather than called because langchaingo returns strings only:
// mapping them back to positions (for page numbers) is ambiguous wherever text
// repeats (table rows, rulers, "x x x"), and a wrong guess drifts the rest of
// the document. Here every piece is a range from the start.
//
// Pieces are measured one by one and BPE token counts are not exactly
// additive, so a merged chunk can come out a token or two over. When that
// happens the whole text is split again with a lower budget (by the excess, and
// by at least 1/32 so pathological text cannot take hundreds of rounds):
// chunks stay in order and no stray fragments appear, at the cost of chunks a
// few tokens smaller. The budget shrinks every round, so the loop ends; at one
// token nothing smaller exists (a character can be several tokens).
func splitRecursive(text string, base, size, overlap int) []piece {
	budget := size
	for {
		s := splitter{text: text, size: budget, overlap: min(overlap, budget-1)}
		ranges := s.split(0, len(text), separators)
		largest := 0
		for _, r := range ranges {
			largest = max(largest, Tokens(text[r.start:r.end]))
		}
		if largest <= size || budget <= 1 {
			out := make([]piece, len(ranges))
			for i, r := range ranges {
				out[i] = piece{start: base + r.start, end: base + r.end}
			}
			return out
		}
		budget = max(1, budget-max(largest-size, budget/32))
	}
}

// span is a byte range of the splitter's text with its token count.
type span struct{ start, end, tokens int }

type splitter struct {
	text          string
	size, overlap int
}

func (s splitter) span(start, end int) span {
	return span{start: start, end: end, tokens: Tokens(s.text[start:end])}
}

// split returns the trimmed chunks of text[start:end].
func (s splitter) split(start, end int, seps []string) []span {
	text := s.text[start:end]
	sep, rest := seps[len(seps)-1], []string(nil)
	for i, c := range seps {
		if c == "" || strings.Contains(text, c) {
			sep, rest = c, seps[i+1:]
			break
		}
	}
	var out, fitting []span
	for _, p := range s.cut(start, end, sep) {
		if p.tokens < s.size {
			fitting = append(fitting, p)
			continue
		}
		out = s.merge(out, fitting)
		fitting = fitting[:0]
		if len(rest) == 0 {
			out = s.emit(out, p.start, p.end)
		} else {
			out = append(out, s.split(p.start, p.end, rest)...)
		}
	}
	return s.merge(out, fitting)
}

// cut splits text[start:end] before every occurrence of sep, so each piece but
// the first starts with its separator and the pieces tile the range; with no
// separator it cuts between characters.
func (s splitter) cut(start, end int, sep string) []span {
	var out []span
	if sep == "" {
		for i := start; i < end; {
			_, n := utf8.DecodeRuneInString(s.text[i:end])
			out = append(out, s.span(i, i+n))
			i += n
		}
		return out
	}
	from := start
	for from < end {
		i := strings.Index(s.text[from:end], sep)
		if i == 0 {
			// The piece starting here holds this separator; look past it.
			i = strings.Index(s.text[from+len(sep):end], sep)
			if i >= 0 {
				i += len(sep)
			}
		}
		if i < 0 {
			break
		}
		out = append(out, s.span(from, from+i))
		from += i
	}
	if from < end {
		out = append(out, s.span(from, end))
	}
	return out
}

// merge joins consecutive pieces into chunks of up to size tokens, starting
// each chunk with the trailing pieces of the previous one that fit in the
// overlap, and appends the chunks to out.
func (s splitter) merge(out, pieces []span) []span {
	var cur []span
	total := 0
	for _, p := range pieces {
		if len(cur) > 0 && total+p.tokens > s.size {
			out = s.emit(out, cur[0].start, cur[len(cur)-1].end)
			for len(cur) > 0 && (total > s.overlap || total+p.tokens > s.size) {
				total -= cur[0].tokens
				cur = cur[1:]
			}
		}
		cur = append(cur, p)
		total += p.tokens
	}
	if len(cur) > 0 {
		out = s.emit(out, cur[0].start, cur[len(cur)-1].end)
	}
	return out
}

// emit appends text[start:end] without its surrounding white space, unless
// nothing is left.
func (s splitter) emit(out []span, start, end int) []span {
	t := s.text[start:end]
	trimmed := strings.TrimLeft(t, " \t\r\n")
	start += len(t) - len(trimmed)
	end = start + len(strings.TrimRight(trimmed, " \t\r\n"))
	if end <= start {
		return out
	}
	return append(out, span{start: start, end: end})
}
