package git

import (
	"bytes"
	"path"
	"strings"
)

// Content types by extension. A fixed table rather than mime.TypeByExtension,
// whose answers depend on the machine's mime.types.
var (
	// documentTypes are binary formats docindex extracts text from: listed
	// without looking at their bytes.
	documentTypes = map[string]string{
		".pdf":  "application/pdf",
		".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		".docm": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
		".pptm": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
		".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		".xlsm": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		".odt":  "application/vnd.oasis.opendocument.text",
	}
	// textTypes are text formats with a type more telling than text/plain.
	// Their bytes are still checked: a .txt full of NULs is not text.
	textTypes = map[string]string{
		".md":       "text/markdown",
		".markdown": "text/markdown",
		".mdown":    "text/markdown",
		".mkd":      "text/markdown",
		".mdx":      "text/markdown",
		".html":     "text/html",
		".htm":      "text/html",
		".xhtml":    "application/xhtml+xml",
		".csv":      "text/csv",
		".tsv":      "text/tab-separated-values",
		".json":     "application/json",
		".xml":      "application/xml",
		".yaml":     "application/yaml",
		".yml":      "application/yaml",
		".css":      "text/css",
		".js":       "text/javascript",
		".mjs":      "text/javascript",
	}
	// skippedExt are formats docindex cannot read (images, media, archives,
	// executables, fonts, legacy Office): skipped without reading them.
	skippedExt = extSet(`
		.png .jpg .jpeg .gif .bmp .ico .icns .webp .tif .tiff .psd .svg .svgz .heic .avif .xcf .ai .eps
		.mp3 .mp4 .m4a .m4v .wav .ogg .oga .ogv .flac .aac .mov .avi .mkv .webm .wmv .mid .midi
		.zip .tar .gz .tgz .bz2 .xz .zst .7z .rar .jar .war .ear .whl .egg .deb .rpm .apk .dmg .iso .img
		.exe .dll .so .dylib .a .o .obj .lib .class .pyc .pyo .wasm .bin .dat .db .sqlite .sqlite3
		.ttf .otf .woff .woff2 .eot
		.doc .xls .ppt .odp .ods .odg .key .numbers .pages`)
)

func extSet(list string) map[string]bool {
	m := map[string]bool{}
	for _, e := range strings.Fields(list) {
		m[e] = true
	}
	return m
}

// sniffLen is how much of a file decides whether it is text: git's own
// heuristic looks at the first 8000 bytes for a NUL.
const sniffLen = 8000

// lfsPointer starts a Git LFS pointer file: a stand-in whose content lives
// elsewhere and is worthless to index.
var lfsPointer = []byte("version https://git-lfs.github.com/spec/v1")

// typeByName returns the content type an extension decides, whether the
// bytes need a look (text formats), and whether the file is skipped outright.
func typeByName(name string) (contentType string, sniff, skip bool) {
	ext := strings.ToLower(path.Ext(name))
	if ct, ok := documentTypes[ext]; ok {
		return ct, false, false
	}
	if skippedExt[ext] {
		return "", false, true
	}
	if ct, ok := textTypes[ext]; ok {
		return ct, true, false
	}
	return "text/plain", true, false
}

// classify decides a file's content type from its name and first bytes;
// "" means the file is skipped (binary, or an LFS pointer).
func classify(name string, head []byte) string {
	ct, sniff, skip := typeByName(name)
	switch {
	case skip:
		return ""
	case !sniff:
		return ct
	case !textual(head):
		return ""
	}
	return ct
}

// textual reports whether a file starting with head is worth reading as
// text: no NUL byte, and not a Git LFS pointer.
func textual(head []byte) bool {
	return bytes.IndexByte(head, 0) < 0 && !bytes.HasPrefix(head, lfsPointer)
}
