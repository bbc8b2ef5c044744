package chunk

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// codecCount is the reference: the codec's own count, regexp and all.
func codecCount(t testing.TB, s string) int {
	t.Helper()
	n, err := codec().Count(s)
	if err != nil {
		t.Fatalf("codec.Count(%q): %v", s, err)
	}
	return n
}

// checkTokens fails t when Tokens(s) differs from the codec's count.
func checkTokens(t testing.TB, s string) {
	t.Helper()
	if got, want := Tokens(s), codecCount(t, s); got != want {
		t.Errorf("Tokens(%q) = %d, codec counts %d", s, got, want)
	}
}

// fragments are the pieces random inputs are made of: every character class
// of the pre-tokenizer and the places where its branches meet.
var fragments = []string{
	// ASCII letters, digits, spaces and controls
	"a", "Z", "word", "Hello", "HTTPServer", "x", "0", "7", "42", "123", "2024", "1234567",
	" ", "  ", "    ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", "\v", "\f", " \n", "  \n  ",
	"\x00", "\x01", "\x1c", "\x1f", "\x7f",
	// punctuation, alone and in runs
	".", ",", "!", "?", "...", "--", "->", "=>", "{", "}", "(", ")", "[", "]", "#", "##", "|", "`", "```",
	"\"", "/", "\\", "*", "**", "_", "~", "@", "$", "%", "^", "&", "+", "=", "<", ">", ":", ";", "-",
	// contractions, in any case, and apostrophes that are none
	"'", "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL",
	"'d", "'D", "'ſ", "'x", "'r", "'v", "'l", "'e", "''", "’s", "’",
	// non-ASCII spaces
	"\u00a0", "\u0085", "\u1680", "\u2000", "\u2009", "\u200a", "\u2028", "\u2029", "\u202f",
	"\u205f", "\u3000", "\u200b", "\ufeff",
	// letters of many scripts, including combining marks (which are no letters)
	"é", "É", "ß", "ſ", "ª", "º", "µ", "Ω", "ж", "Жизнь", "λόγος", "日本語", "中", "한국어", "ひらがな",
	"カタカナ", "العربية", "עברית", "हिन्दी", "ि", "\u0301", "e\u0301", "ไทย", "ქართული", "Ꭰ",
	// numbers that are no ASCII digits
	"٣", "٤٥٦", "१२३", "１２３", "²", "³", "½", "Ⅻ", "ⅻ", "〇", "𝟘", "①",
	// symbols, emoji and the replacement character
	"€", "£", "©", "™", "→", "∑", "√", "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "\ufe0f", "\ufffd",
	"𝔘𝔫𝔦", "𐍈",
	// invalid UTF-8: stray continuation bytes, truncated sequences, surrogates
	"\xff", "\xfe", "\x80", "\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf",
}

// randomText joins n random fragments.
func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(fragments[r.IntN(len(fragments))])
	}
	return b.String()
}

func TestTokensRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for range 20000 {
		checkTokens(t, randomText(r, 1+r.IntN(12)))
		if t.Failed() {
			return
		}
	}
	for range 300 {
		checkTokens(t, randomText(r, 200+r.IntN(800)))
		if t.Failed() {
			return
		}
	}
}

// corpus returns real-looking texts: prose, this package's own Go source,
// Markdown with tables and code, and text with CRLF line ends.
func corpus(t testing.TB) []string {
	texts := []string{
		prose(1, 3000, 30),
		prose(2, 500, 0),
		markdownSample,
		strings.ReplaceAll(markdownSample, "\n", "\r\n"),
		strings.ReplaceAll(prose(3, 800, 8), " ", "  "),
		strings.ReplaceAll(prose(4, 800, 8), "\n\n", " \n \t\n   \n"),
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	return texts
}

const markdownSample = `# Release notes

## What's new in 2.4.1

We've rewritten the **indexer**; it'll be ~3x faster. Don't PANIC: the API's
the same. I'M SURE YOU'LL LIKE IT, and we'D LOVE feedback.

| Name      | Tokens | Time (ms) | Notes            |
|-----------|-------:|----------:|------------------|
| recursive |    512 |     12.75 | default          |
| markdown  |   1024 |      9.01 | keeps headings   |
| semantic  |     64 |    100000 | needs embeddings |

` + "```go" + `
func Tokens(s string) int {
	if s == "" {
		return 0 // nothing to count
	}
	return len(s)/4 + 1
}
` + "```" + `

1. First item — with an em dash
2. Second item: “quoted”, 'single', «guillemets»
   - nested: café, naïve, Zürich, 東京, Москва
     and a line with trailing spaces   
    
Math: x² + y² = z², ∑ᵢ aᵢ ≥ 0, 1/2 = ½, 12345678901234567890.
Emoji: 👍🏽 🎉 👨‍👩‍👧 — done!!!
`

func TestTokensCorpus(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, text := range corpus(t) {
		checkTokens(t, text)
		// The splitters count arbitrary ranges, some cut inside a rune.
		for range 200 {
			i := r.IntN(len(text))
			j := i + r.IntN(min(len(text)-i, 2000)+1)
			checkTokens(t, text[i:j])
		}
		if t.Failed() {
			return
		}
	}
}

// TestTokensEdges covers the places where the pre-tokenizer's branches meet.
func TestTokensEdges(t *testing.T) {
	for _, s := range []string{
		"", "a", " ", "\n", "\x7f", "a\x7fb", " \x7f", "\x7f\x7f abc", "'\x7f", "\x00\x00",
		"it's", "IT'S", "we'LL", "they'Re", "I'M", "'ſ", "'ſs", "x'", "'", "'l", "'lx", "'ll", "'Ll",
		"  \n  \n  x", "\n\n  \n x", "a  b", "a   b", "a \t\nb", " \n", "x \n", "x  ", "x \t", "\t\tx",
		"\u00a0\u00a0x", "\u3000x", "a\u2028b", " \r\n\r\n  \r\n ", "   .", "  1", " 1", " .", "...\n\n\r",
		"1234567", "١٢٣٤", "12a34", "a1", "x\xffy", "\xe2\x82", "\xe2\x82a", " \xff", "\xff\xff\xff",
		strings.Repeat(" ", 1000), strings.Repeat("\n", 300), strings.Repeat("a", 5000),
		strings.Repeat("9", 1001), strings.Repeat("!", 777), strings.Repeat("ab ", 400),
		strings.Repeat("日本", 300), strings.Repeat("\xff", 50), strings.Repeat("😀", 70),
		strings.Repeat(" \n", 3000), strings.Repeat("\t ", 3000) + "x", strings.Repeat("\u3000\r", 500) + "a",
	} {
		checkTokens(t, s)
	}
}

// TestTokensRunes puts every rune of the Basic Multilingual Plane, and a
// sample of the others, in the contexts that tell the pre-tokenizer's rune
// classes apart.
func TestTokensRunes(t *testing.T) {
	step := rune(1)
	var b strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r += step {
		if r == 0x10000 {
			step = 13 // the supplementary planes: a sample
		}
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		b.WriteString("a" + c + "b " + c + " 1" + c + c + "'" + c + "\n" + c + "  " + c + "x" + c + "\n. ")
		if b.Len() > 4000 || r+step > utf8.MaxRune {
			if s := b.String(); Tokens(s) != codecCount(t, s) {
				// Find the rune to report.
				for _, r := range s {
					checkTokens(t, "a"+string(r)+"b "+string(r)+" 1"+string(r)+string(r)+"'"+string(r)+"\n"+string(r)+"  "+string(r)+"x"+string(r)+"\n. ")
				}
				t.Fatalf("counts differ in %q", s)
			}
			b.Reset()
		}
	}
}

// TestTokensConcurrent counts from several goroutines, with the package's
// cache and with a tiny one that is emptied all the time (run with -race).
func TestTokensConcurrent(t *testing.T) {
	tiny := newCountCache(4)
	texts := corpus(t)
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = codecCount(t, s)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for k := range 40 {
				i := (g + k) % len(texts)
				if got := Tokens(texts[i]); got != want[i] {
					t.Errorf("Tokens(text %d) = %d, want %d", i, got, want[i])
				}
				if got := tiny.tokens(texts[i]); got != want[i] {
					t.Errorf("tokens(text %d) with a tiny cache = %d, want %d", i, got, want[i])
				}
				s := randomText(r, 50)
				if got, want := Tokens(s), codecCount(t, s); got != want {
					t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "it's", "WE'LL", "'ſ", "  \n  \n  x", "a\x7fb", "\u00a0\u00a0x", "x\xffy",
		"12345", "٣٤٥", "👍🏽 ok", " \r\n\t x", "| a | b |\n|---|---|\n", "func f() {\n\treturn 0\n}\n",
		markdownSample[:200],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkTokens(t, s)
	})
}

// BenchmarkTokens counts 20 KB of prose with the codec alone and with Tokens.
func BenchmarkTokens(b *testing.B) {
	text := prose(9, 3600, 20)
	b.Run("codec", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			codecCount(b, text)
		}
	})
	b.Run("Tokens", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Tokens(text)
		}
	})
}
