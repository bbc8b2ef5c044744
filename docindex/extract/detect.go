package extract

import (
	"archive/zip"
	"fmt"
	"io"
	"mime"
	"path/filepath"
	"strings"

	"github.com/gabriel-vasile/mimetype"
)

// MIME types of the formats, as Detect reports them.
var formatMIME = map[string]string{
	"pdf":      "application/pdf",
	"docx":     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"pptx":     "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"xlsx":     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"odt":      "application/vnd.oasis.opendocument.text",
	"csv":      "text/csv",
	"html":     "text/html",
	"markdown": "text/markdown",
	"json":     "application/json",
	"text":     "text/plain",
}

// binaryFormats can be told apart by their content alone.
var binaryFormats = map[string]bool{"pdf": true, "docx": true, "pptx": true, "xlsx": true, "odt": true}

// formatOfMIME maps a MIME type (parameters allowed) to a format, "" when none.
func formatOfMIME(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ct))
	}
	switch mt {
	case "application/pdf", "application/x-pdf":
		return "pdf"
	case formatMIME["docx"]:
		return "docx"
	case formatMIME["pptx"]:
		return "pptx"
	case formatMIME["xlsx"]:
		return "xlsx"
	case formatMIME["odt"]:
		return "odt"
	case "text/csv", "text/tab-separated-values", "application/csv":
		return "csv"
	case "text/html", "application/xhtml+xml":
		return "html"
	case "text/markdown", "text/x-markdown":
		return "markdown"
	case "application/json", "text/json", "application/ld+json":
		return "json"
	case "text/plain":
		return "text"
	}
	return ""
}

// formatOfExt maps a file name's extension to a format, "" when none.
func formatOfExt(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".pdf":
		return "pdf"
	case ".docx", ".docm":
		return "docx"
	case ".pptx", ".pptm":
		return "pptx"
	case ".xlsx", ".xlsm":
		return "xlsx"
	case ".odt":
		return "odt"
	case ".csv", ".tsv", ".tab":
		return "csv"
	case ".html", ".htm", ".xhtml":
		return "html"
	case ".md", ".markdown", ".mdown", ".mkd", ".mdx":
		return "markdown"
	case ".json":
		return "json"
	case ".txt", ".text", ".log", ".rst", ".adoc", ".asciidoc", ".org", ".tex":
		return "text"
	}
	return ""
}

// sniff detects the MIME type of a file's content; zip containers are looked into,
// because mimetype only sees the first few KiB and an OOXML file whose first entries
// are not the main part is reported as plain zip.
func sniff(path string) (*mimetype.MIME, string, error) {
	m, err := mimetype.DetectFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("detect type: %w", err)
	}
	format := formatOfMIME(m.String())
	if m.Is("application/zip") || format == "docx" || format == "pptx" || format == "xlsx" || format == "odt" {
		if f := zipFormat(path); f != "" {
			format = f
		}
	}
	return m, format, nil
}

// zipFormat tells the office format of a zip container by its entries.
func zipFormat(path string) string {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return ""
	}
	defer zr.Close()
	for _, f := range zr.File {
		switch f.Name {
		case "word/document.xml":
			return "docx"
		case "ppt/presentation.xml":
			return "pptx"
		case "xl/workbook.xml":
			return "xlsx"
		case "mimetype":
			rc, err := f.Open()
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(rc, 100))
			rc.Close()
			if strings.TrimSpace(string(b)) == formatMIME["odt"] {
				return "odt"
			}
		}
	}
	return ""
}

// isOLE reports whether the sniffed type is an OLE compound file, which is what a
// password-protected DOCX, PPTX or XLSX is (and the legacy .doc, .xls, .ppt).
func isOLE(m *mimetype.MIME) bool {
	for ; m != nil; m = m.Parent() {
		if m.Is("application/x-ole-storage") {
			return true
		}
	}
	return false
}

// formatOf decides the format to extract. The content decides for the binary formats;
// then the declared type, when it is specific; then the extension; then the sniffed
// text type. A file that claims a binary format its content does not confirm is
// still tried as that format, so that the user gets "corrupt" rather than "unsupported".
func formatOf(path, name, contentType string) (string, error) {
	m, sniffed, err := sniff(path)
	if err != nil {
		return "", err
	}
	if binaryFormats[sniffed] {
		return sniffed, nil
	}
	ext := formatOfExt(name)
	declared := formatOfMIME(contentType)
	if isOLE(m) {
		if ext == "docx" || ext == "pptx" || ext == "xlsx" || binaryFormats[declared] {
			return "", fmt.Errorf("extract %s: %w", firstNonEmpty(ext, declared), ErrEncrypted)
		}
		return "", fmt.Errorf("extract: legacy Office format %s (convert it to DOCX, XLSX or PPTX): %w", m.String(), ErrUnsupported)
	}
	textual := strings.HasPrefix(m.String(), "text/") || sniffed != ""
	switch {
	case declared != "" && declared != "text":
		if binaryFormats[declared] || textual {
			return declared, nil
		}
	case binaryFormats[ext]:
		return ext, nil
	}
	if textual {
		if ext != "" {
			return ext, nil
		}
		if sniffed != "" {
			return sniffed, nil
		}
		return "text", nil
	}
	return "", fmt.Errorf("extract: %s content: %w", m.String(), ErrUnsupported)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Detect returns the MIME type of the file at path, for uploads whose client sent
// none. The content decides; the name refines generic results (a .md file sniffs as
// text/plain, a zipped office file whose main part is not near the start as zip).
func Detect(path, name string) (string, error) {
	m, sniffed, err := sniff(path)
	if err != nil {
		return "", err
	}
	if binaryFormats[sniffed] {
		return formatMIME[sniffed], nil
	}
	ext := formatOfExt(name)
	if strings.HasPrefix(m.String(), "text/plain") && ext != "" && !binaryFormats[ext] && ext != "text" {
		return formatMIME[ext], nil
	}
	return m.String(), nil
}
