package filecloud

import "testing"

func TestFilter(t *testing.T) {
	for _, tc := range []struct {
		include, exclude []string
		path             string
		keep             bool
	}{
		{nil, nil, "a/b/c.md", true},
		{[]string{"*.md"}, nil, "c.md", true},
		{[]string{"*.md"}, nil, "a/b/c.md", true}, // no '/': any depth
		{[]string{"*.md"}, nil, "a/b/c.txt", false},
		{[]string{"/*.md"}, nil, "a/c.md", false}, // leading '/': from the root
		{[]string{"/*.md"}, nil, "c.md", true},
		{[]string{"a/*.md"}, nil, "a/c.md", true},
		{[]string{"a/*.md"}, nil, "a/b/c.md", false}, // '*' stays in its segment
		{[]string{"a/**/*.md"}, nil, "a/c.md", true}, // '**' spans zero segments
		{[]string{"a/**/*.md"}, nil, "a/b/d/c.md", true},
		{[]string{"a/**"}, nil, "a/b/d/c.md", true},
		{[]string{"a/**"}, nil, "ab/c.md", false},
		{[]string{"**/b/*.md"}, nil, "x/y/b/c.md", true},
		{[]string{"docs"}, nil, "x/docs/y/z.txt", true}, // a folder covers what is below it
		{[]string{"docs/"}, nil, "x/docs/z.txt", true},
		{[]string{"b?.md"}, nil, "b1.md", true},
		{[]string{"b?.md"}, nil, "b12.md", false},
		{[]string{"[ab].md"}, nil, "b.md", true},
		{nil, []string{"drafts"}, "drafts/x.md", false},
		{nil, []string{"drafts"}, "a/drafts/x.md", false},
		{nil, []string{"drafts"}, "draftsman.md", true},
		{nil, []string{"/drafts"}, "a/drafts/x.md", true},
		{nil, []string{"*.tmp"}, "a/b.tmp", false},
		{[]string{"*.md"}, []string{"a/**/secret*"}, "a/b/secret-plan.md", false},
		{[]string{"*.md"}, []string{"a/**/secret*"}, "b/secret-plan.md", true},
		{[]string{"*.md", "*.pdf"}, nil, "x.pdf", true},
		{[]string{"ü*"}, nil, "dir/über.txt", true},
	} {
		f, problems := newFilter(tc.include, tc.exclude)
		if len(problems) > 0 {
			t.Fatalf("include %q exclude %q: %v", tc.include, tc.exclude, problems)
		}
		if got := f.keep(tc.path); got != tc.keep {
			t.Errorf("include %q exclude %q: keep(%q) = %v, want %v", tc.include, tc.exclude, tc.path, got, tc.keep)
		}
	}
}

func TestPrune(t *testing.T) {
	f, _ := newFilter(nil, []string{"archive", "tmp/**", "a/b"})
	for dir, want := range map[string]bool{
		"archive": true, "x/archive": true, "tmp": true, "tmp/x": true, "a/b": true, "a/b/c": true,
		"a": false, "x": false, "x/a/b": false, "archives": false,
	} {
		if got := f.prune(dir); got != want {
			t.Errorf("prune(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestVersionAndContentType(t *testing.T) {
	for etag, want := range map[string]string{`"abc"`: "abc", `W/"abc"`: "W/abc", "abc": "abc", `""`: ""} {
		if got := normalizeETag(etag); got != want {
			t.Errorf("normalizeETag(%q) = %q, want %q", etag, got, want)
		}
	}
	for _, tc := range []struct{ server, name, want string }{
		{"text/markdown", "a.md", "text/markdown"},
		{"", "a.pdf", "application/pdf"},
		{"application/octet-stream", "a.pdf", "application/pdf"},
		{"binary/octet-stream", "a.pdf", "application/pdf"},
		{"application/octet-stream", "a.unknown-ext", "application/octet-stream"},
		{"", "noext", ""},
	} {
		if got := contentType(tc.server, tc.name); got != tc.want {
			t.Errorf("contentType(%q, %q) = %q, want %q", tc.server, tc.name, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	secrets := []string{"s3cr3t/p@ss word", "", "abc"}
	err := scrub(errorString(`Get "http://h/?p=s3cr3t%2Fp%40ss+word": s3cr3t/p@ss word abc`), secrets)
	if got := err.Error(); got != `Get "http://h/?p=[redacted]": [redacted] abc` {
		t.Errorf("scrubbed %q", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
