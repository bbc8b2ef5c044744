package extract

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"crypto/rc4"
	"fmt"
	"strings"
)

// A small PDF writer for test fixtures: pages of raw content streams in Courier
// (a standard font; the Widths array is written out so glyph positions are exact),
// optional form XObject, Flate-compressed streams, a correct xref table, and
// optional RC4 encryption (standard security handler, revision 3, 128-bit).

type testPDF struct {
	title   string
	pages   []string // content streams
	form    string   // content of form XObject /Fm1, available to every page
	badPage int      // 1-based page whose stream is replaced by bytes that do not inflate
	encrypt bool     // RC4 128-bit with userPw (may be empty: permissions-only) and ownerPw
	userPw  string
	ownerPw string
	noFlate bool
	fileID  []byte
	cid     bool   // a Type0 font with 2-byte codes (0x0100 + Latin-1 code), ToUnicode and a W array
	stdFont string // a standard font (Helvetica, Times-Roman) without Widths, as old producers write
	noToUni bool   // with cid: leave out the ToUnicode map, so the codes are bare glyph ids
}

var pdfPad = []byte{0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A}

func padPw(pw string) []byte {
	b := append([]byte(pw), pdfPad...)
	return b[:32]
}

func xorKey(key []byte, x byte) []byte {
	out := make([]byte, len(key))
	for i, k := range key {
		out[i] = k ^ x
	}
	return out
}

func rc4x(key, data []byte) []byte {
	c, _ := rc4.NewCipher(key)
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out
}

func pdfLiteral(b []byte) string {
	var s strings.Builder
	s.WriteString("<")
	for _, c := range b {
		fmt.Fprintf(&s, "%02x", c)
	}
	s.WriteString(">")
	return s.String()
}

// bytes renders the file.
func (p *testPDF) bytes() []byte {
	const perms = -4 // all permissions
	var key, o, u []byte
	id := p.fileID
	if id == nil {
		id = []byte("docindex-test-id")
	}
	if p.encrypt {
		// Standard security handler, revision 3, 128-bit RC4 (PDF 32000-1, 7.6.3).
		okey := md5.Sum(padPw(firstNonEmpty(p.ownerPw, p.userPw)))
		for range 50 {
			okey = md5.Sum(okey[:])
		}
		o = padPw(p.userPw)
		for i := range 20 {
			o = rc4x(xorKey(okey[:], byte(i)), o)
		}
		h := md5.New()
		h.Write(padPw(p.userPw))
		h.Write(o)
		h.Write([]byte{byte(perms & 0xff), byte(perms >> 8 & 0xff), byte(perms >> 16 & 0xff), byte(perms >> 24 & 0xff)})
		h.Write(id)
		key = h.Sum(nil)
		for range 50 {
			k := md5.Sum(key)
			key = k[:]
		}
		uh := md5.Sum(append(append([]byte{}, pdfPad...), id...))
		u = uh[:]
		for i := range 20 {
			u = rc4x(xorKey(key, byte(i)), u)
		}
		u = append(u, make([]byte, 16)...)
	}
	objKey := func(num int) []byte {
		h := md5.New()
		h.Write(key)
		h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), 0, 0})
		return h.Sum(nil)
	}
	str := func(num int, s string) string {
		if !p.encrypt {
			return "(" + strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s) + ")"
		}
		return pdfLiteral(rc4x(objKey(num), []byte(s)))
	}

	var objs []string // objs[i] is object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	stream := func(num int, dict string, data []byte, corrupt bool) string {
		filter := ""
		if !p.noFlate || corrupt {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
			if corrupt {
				data = []byte("this is not a zlib stream, the page cannot be inflated at all")
			}
			filter = " /Filter /FlateDecode"
		}
		if p.encrypt {
			data = rc4x(objKey(num), data)
		}
		return fmt.Sprintf("<<%s /Length %d%s>>\nstream\n%s\nendstream", dict, len(data), filter, data)
	}

	add("<< /Type /Catalog /Pages 2 0 R >>")
	add("") // pages, filled in below
	widths := strings.TrimSpace(strings.Repeat("600 ", 224))
	var font int
	if p.cid {
		// W in both forms: a list for codes 0x120-0x14F (space to O), a range for the
		// rest; DW is wrong on purpose (1000), so a reader that ignores either form
		// misplaces words.
		w := "[288 [" + strings.TrimSpace(strings.Repeat("600 ", 48)) + "] 336 511 600]"
		desc := add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /DejaVuSansMono /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /W %s /FontDescriptor << /Type /FontDescriptor /FontName /DejaVuSansMono /Flags 33 /FontBBox [0 -200 600 800] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 >> >>", w))
		cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Test-UCS def /CMapType 2 def\n" +
			"1 begincodespacerange <0000> <FFFF> endcodespacerange\n1 beginbfrange <0120> <01FF> <0020> endbfrange\n" +
			"endcmap CMapName currentdict /CMap defineresource pop end end\n"
		n := len(objs) + 1
		add(stream(n, "", []byte(cmap), false))
		toUni := fmt.Sprintf(" /ToUnicode %d 0 R", n)
		if p.noToUni {
			toUni = ""
		}
		font = add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /DejaVuSansMono /Encoding /Identity-H /DescendantFonts [%d 0 R]%s >>", desc, toUni))
	} else if p.stdFont != "" {
		font = add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>", p.stdFont))
	} else {
		font = add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 255 /Widths [%s] >>", widths))
	}
	content := func(c string) []byte {
		if p.cid {
			return []byte(twoByteStrings(c))
		}
		return []byte(c)
	}
	resources := fmt.Sprintf("/Font << /F1 %d 0 R >>", font)
	if p.form != "" {
		n := len(objs) + 1
		add(stream(n, fmt.Sprintf(" /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Matrix [1 0 0 1 0 0] /Resources << %s >>", resources), content(p.form), false))
		resources += fmt.Sprintf(" /XObject << /Fm1 %d 0 R >>", n)
	}
	var kids []string
	for i, c := range p.pages {
		n := len(objs) + 1
		add(stream(n, "", content(c), p.badPage == i+1))
		pg := add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << %s >> /Contents %d 0 R >>", resources, n))
		kids = append(kids, fmt.Sprintf("%d 0 R", pg))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	info := len(objs) + 1
	add(fmt.Sprintf("<< /Title %s /Producer %s >>", str(info, p.title), str(info, "docindex test writer")))
	encrypt := 0
	if p.encrypt {
		encrypt = add(fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /O %s /U %s /P %d >>", pdfLiteral(o), pdfLiteral(u), perms))
	}

	var out bytes.Buffer
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = out.Len()
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	trailer := fmt.Sprintf("/Size %d /Root 1 0 R /Info %d 0 R /ID [%s %s]", len(objs)+1, info, pdfLiteral(id), pdfLiteral(id))
	if encrypt > 0 {
		trailer += fmt.Sprintf(" /Encrypt %d 0 R", encrypt)
	}
	fmt.Fprintf(&out, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
	return out.Bytes()
}

// fixturePages are the pages of testdata/words.pdf. Page 1 positions words without
// space glyphs in the three ways producers do (TJ offsets, Td moves, Tw with real
// spaces), with kerning inside words that must not split them. Page 2 has a Latin-1
// character and two paragraphs; page 3 uses Tm, TL and T*, and draws a form XObject.
var fixturePages = []string{
	`BT /F1 12 Tf 72 720 Td [(The)-600(quick)-600(brown)-600(fox)] TJ ET
BT /F1 12 Tf 72 700 Td (jumps) Tj 40 0 Td (over) Tj 36 0 Td (the) Tj 30 0 Td (lazy) Tj 36 0 Td (dog.) Tj ET
BT /F1 12 Tf 72 680 Td [(W)120(ord)-700(kern)-50(ing)-700(stays)-700(whole)] TJ ET
BT /F1 12 Tf 72 660 Td 2 Tw (Spaces drawn as glyphs.) Tj ET
BT /F1 12 Tf 72 640 Td (CAPITAL) Tj 55 0 Td (LETTERS) Tj 55 0 Td (42) Tj ET`,
	`BT /F1 14 Tf 72 720 Td (Second page title) Tj ET
BT /F1 12 Tf 72 690 Td (A caf\351 serves espresso near) Tj 0 -14 Td (the station.) Tj ET
BT /F1 12 Tf 72 600 Td (Another paragraph after a gap.) Tj ET`,
	`BT /F1 12 Tf 14 TL 1 0 0 1 72 720 Tm (Third page, first line) Tj T* (second line via T-star) Tj T* ET
/Fm1 Do`,
}

const fixtureForm = `BT /F1 10 Tf 72 72 Td [(Footer)-500(from)-500(a)-500(form)-500(XObject)] TJ ET`

func wordsPDF() *testPDF {
	return &testPDF{title: "Words Test Document", pages: fixturePages, form: fixtureForm}
}

// twoByteStrings rewrites the literal strings of a content stream as hex strings of
// 2-byte codes 0x0100 + byte, for the Type0 font of testPDF.cid.
func twoByteStrings(c string) string {
	var out strings.Builder
	for i := 0; i < len(c); i++ {
		if c[i] != '(' {
			out.WriteByte(c[i])
			continue
		}
		out.WriteByte('<')
		for i++; i < len(c) && c[i] != ')'; i++ {
			ch := c[i]
			if ch == '\\' {
				i++
				switch {
				case c[i] >= '0' && c[i] <= '7':
					v := 0
					for k := 0; k < 3 && c[i] >= '0' && c[i] <= '7'; k++ {
						v = v*8 + int(c[i]-'0')
						i++
					}
					i--
					ch = byte(v)
				default:
					ch = c[i]
				}
			}
			fmt.Fprintf(&out, "01%02x", ch)
		}
		out.WriteByte('>')
	}
	return out.String()
}
