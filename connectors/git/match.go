package git

import (
	"errors"
	"path"
	"strings"
)

// Match reports whether the slash-separated file path p is selected by the
// glob pattern. The syntax is path.Match's within a segment ('*', '?',
// '[...]'), plus:
//
//   - '**' as a whole segment matches any number of segments, none included;
//   - a pattern without '/' matches a name at any depth ("*.md" is
//     "**/*.md"), as in .gitignore;
//   - a leading '/' anchors the pattern at the repository root;
//   - a pattern that matches a directory matches every file below it
//     ("docs" and "docs/" select docs/a.md and docs/x/b.md).
//
// An invalid pattern matches nothing; Validate refuses it beforehand.
func Match(pattern, p string) bool {
	pat := splitPattern(pattern)
	if pat == nil {
		return false
	}
	segs := strings.Split(p, "/")
	// The file itself or any directory above it.
	for n := len(segs); n >= 1; n-- {
		if matchSegments(pat, segs[:n]) {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if Match(pat, p) {
			return true
		}
	}
	return false
}

// splitPattern turns a pattern into segments; nil for an empty pattern.
func splitPattern(pattern string) []string {
	anchored := strings.HasPrefix(pattern, "/")
	pattern = strings.Trim(pattern, "/")
	if pattern == "" {
		return nil
	}
	// '[!...]' negates a class in shells and .gitignore; path.Match spells
	// it '[^...]'.
	segs := strings.Split(strings.ReplaceAll(pattern, "[!", "[^"), "/")
	if !anchored && len(segs) == 1 {
		segs = []string{"**", segs[0]}
	}
	return segs
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegments(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// checkPattern tells what is wrong with a pattern, nil when it is usable.
func checkPattern(pattern string) error {
	if strings.Trim(pattern, "/") == "" {
		return errors.New("is an empty pattern")
	}
	for _, seg := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if seg == "" {
			return errors.New("has an empty path segment ('//')")
		}
		if strings.Contains(seg, "**") && seg != "**" {
			return errors.New("uses '**' inside a segment; '**' must be a whole segment ('docs/**/*.md')")
		}
		if _, err := path.Match(seg, ""); err != nil {
			return errors.New("is not a valid glob (unbalanced '[' or a trailing '\\')")
		}
	}
	return nil
}
