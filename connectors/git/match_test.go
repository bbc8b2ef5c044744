package git

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.md", "README.md", true},
		{"*.md", "docs/a/b.md", true}, // no '/': any depth
		{"*.md", "docs/a.txt", false},
		{"/*.md", "README.md", true}, // leading '/': anchored
		{"/*.md", "docs/a.md", false},
		{"docs", "docs/a.md", true}, // a directory selects what is below it
		{"docs", "src/docs/a.md", true},
		{"/docs", "src/docs/a.md", false},
		{"docs/", "docs/x/y.md", true},
		{"docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/x/a.md", false},
		{"docs/**/*.md", "docs/a.md", true}, // '**' spans zero segments too
		{"docs/**/*.md", "docs/x/y/a.md", true},
		{"docs/**/*.md", "src/docs/a.md", false},
		{"**/testdata/**", "a/testdata/b/c.txt", true},
		{"**/testdata/**", "testdata/c.txt", true},
		{"**", "anything/at/all", true},
		{"src/?ain.go", "src/main.go", true},
		{"src/[mn]ain.go", "src/main.go", true},
		{"src/[!m]ain.go", "src/main.go", false},
		{"docs/a.md", "docs/a.mdx", false},
		{"", "a", false},
		{"docs/[a", "docs/[a", false}, // invalid: matches nothing
	} {
		if got := Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestCheckPattern(t *testing.T) {
	for _, p := range []string{"*.md", "docs/**/*.md", "/README.md", "docs/", "[abc]*"} {
		if err := checkPattern(p); err != nil {
			t.Errorf("checkPattern(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", "/", "a//b", "a**", "docs/**x/y", "[a", `a\`} {
		if err := checkPattern(p); err == nil {
			t.Errorf("checkPattern(%q) = nil, want an error", p)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, head, want string
	}{
		{"README.md", "# Title\n", "text/markdown"},
		{"page.HTML", "<html>", "text/html"},
		{"main.go", "package main\n", "text/plain"},
		{"Makefile", "all:\n", "text/plain"},
		{"notes.txt", "a\x00b", ""},                           // NUL: binary
		{"tool", "\x7fELF\x00", ""},                           // binary without an extension
		{"report.pdf", "%PDF-1.7\x00\x01", "application/pdf"}, // binary document: kept
		{"deck.pptx", "PK\x03\x04\x00", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
		{"photo.JPG", "not even looked at", ""},
		{"old.doc", "legacy Office", ""},
		{"asset.psd", "version https://git-lfs.github.com/spec/v1\n", ""},
		{"data.csv", "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 1\n", ""}, // LFS pointer
	} {
		if got := classify(tc.name, []byte(tc.head)); got != tc.want {
			t.Errorf("classify(%q, %q) = %q, want %q", tc.name, tc.head, got, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	got := expand("https://h/{branch}/{commit}/{path}?b={blob}", "c0ffee", "release/1.0", "docs/a b/ü#1.md", "b10b")
	want := "https://h/release/1.0/c0ffee/docs/a%20b/%C3%BC%231.md?b=b10b"
	if got != want {
		t.Errorf("expand = %q, want %q", got, want)
	}
}
