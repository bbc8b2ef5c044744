package docsuite

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/docindex/docindex/plugins/connector"
)

// acl is a set of read restrictions: who may view. nil means unrestricted.
type acl struct {
	users  []string // e-mail addresses where the suite tells them, else account ids or user names
	groups []string // group names
}

// newACL returns the restriction for users and groups, or nil when both
// are empty: Confluence reports an unrestricted page as empty lists.
func newACL(users, groups []string) *acl {
	a := &acl{users: normalize(users, true), groups: normalize(groups, false)}
	if len(a.users) == 0 && len(a.groups) == 0 {
		return nil
	}
	return a
}

func normalize(in []string, lower bool) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if lower && strings.Contains(s, "@") {
			s = strings.ToLower(s) // e-mail addresses match case-insensitively
		}
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersect combines the restrictions of a page and of an ancestor: in
// Confluence a viewer must pass both. Who passes both cannot be known
// exactly from names alone (a user of one list may be a member of a group
// of the other), so only entries in both lists remain: the result may deny
// someone Confluence lets in, never the other way round.
func intersect(a, b *acl) *acl {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	both := func(x, y []string) []string {
		var out []string
		for _, s := range x {
			if _, ok := slices.BinarySearch(y, s); ok {
				out = append(out, s)
			}
		}
		return out
	}
	// Not newACL: an empty intersection means nobody, not everybody.
	return &acl{users: both(a.users, b.users), groups: both(a.groups, b.groups)}
}

// access is the connector's access list for effective restriction a.
func (a *acl) access() *connector.Access {
	if a == nil {
		return &connector.Access{Public: true}
	}
	return &connector.Access{Users: slices.Clone(a.users), Groups: slices.Clone(a.groups)}
}

// version is an item version: the suite's version number, plus a digest of
// the restriction when there is one. A change of restrictions then changes
// the version too, so that the host, which skips items whose version it
// holds, takes up the new access list (Confluence does not count a
// restriction change as a new page version).
func (a *acl) version(number int) string {
	v := strconv.Itoa(number)
	if a == nil {
		return v
	}
	h := sha256.New()
	for _, u := range a.users {
		h.Write([]byte("u:" + u + "\n"))
	}
	for _, g := range a.groups {
		h.Write([]byte("g:" + g + "\n"))
	}
	return v + "-r" + hex.EncodeToString(h.Sum(nil))[:12]
}
