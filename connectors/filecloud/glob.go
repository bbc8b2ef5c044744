package filecloud

import (
	"fmt"
	"path"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// filter applies the include and exclude globs to paths relative to the
// root or prefix ("guide/intro.md"). The rules follow .gitignore, which
// users already know: a pattern without '/' matches a name at any depth, one
// with '/' matches from the root, '**' spans folders, and a pattern that
// matches a folder covers everything below it.
type filter struct {
	include, exclude []glob
}

// glob is one pattern split into path segments.
type glob []string

func newFilter(include, exclude []string) (*filter, []connector.Problem) {
	var problems []connector.Problem
	parse := func(key string, pats []string) []glob {
		var out []glob
		for i, p := range pats {
			g, err := parseGlob(p)
			if err != nil {
				problems = append(problems, connector.Problem{Field: fmt.Sprintf("/%s/%d", key, i), Message: err.Error()})
				continue
			}
			out = append(out, g)
		}
		return out
	}
	f := &filter{include: parse("include", include), exclude: parse("exclude", exclude)}
	return f, problems
}

func parseGlob(p string) (glob, error) {
	trimmed := strings.Trim(p, "/")
	if trimmed == "" {
		return nil, fmt.Errorf("empty pattern %q", p)
	}
	segs := strings.Split(trimmed, "/")
	for _, s := range segs {
		if s == "" {
			return nil, fmt.Errorf("pattern %q has an empty path segment", p)
		}
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %v", p, err)
		}
	}
	// Without a slash inside (a leading or trailing one does not count,
	// as in .gitignore) the pattern names a file or folder at any depth.
	if !strings.Contains(strings.TrimSuffix(p, "/"), "/") {
		segs = append(glob{"**"}, segs...)
	}
	return segs, nil
}

// keep reports whether the file at rel passes the filter.
func (f *filter) keep(rel string) bool {
	segs := strings.Split(rel, "/")
	if len(f.include) > 0 && !anyCovers(f.include, segs) {
		return false
	}
	return !anyCovers(f.exclude, segs)
}

// prune reports whether the folder at rel is excluded as a whole, so that
// a listing need not descend into it.
func (f *filter) prune(rel string) bool {
	return anyCovers(f.exclude, strings.Split(rel, "/"))
}

// anyCovers reports whether a glob matches the path segs or one of its
// folders.
func anyCovers(globs []glob, segs []string) bool {
	for _, g := range globs {
		for n := 1; n <= len(segs); n++ {
			if g.match(segs[:n]) {
				return true
			}
		}
	}
	return false
}

func (g glob) match(segs []string) bool {
	if len(g) == 0 {
		return len(segs) == 0
	}
	if g[0] == "**" {
		// "**" takes zero or more segments.
		for i := 0; i <= len(segs); i++ {
			if g[1:].match(segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(g[0], segs[0]) // patterns were checked in parseGlob
	return ok && g[1:].match(segs[1:])
}
