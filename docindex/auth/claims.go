package auth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AdminRole in a token's roles claim makes its holder a global admin.
const AdminRole = "admin"

// Claims is the identity a verified token carries.
type Claims struct {
	Subject string    // "sub", never empty
	Email   string    // "email", never empty; kept as sent (compare case-insensitively)
	Name    string    // "name", may be empty
	Groups  []string  // "groups": directory group ids
	Roles   []string  // "roles"
	Expiry  time.Time // "exp"; zero when the token has none (HS256 only)
}

// IsAdmin reports whether the roles claim holds "admin" (exactly; role
// names are identifiers, not prose, so no case folding).
func (c *Claims) IsAdmin() bool {
	return c != nil && slices.Contains(c.Roles, AdminRole)
}

// tokenClaims is the JSON payload both verifiers decode; embedding
// RegisteredClaims lets golang-jwt validate exp, nbf, aud and iss.
type tokenClaims struct {
	jwt.RegisteredClaims
	Email  string     `json:"email,omitempty"`
	Name   string     `json:"name,omitempty"`
	Groups stringList `json:"groups,omitempty"`
	Roles  stringList `json:"roles,omitempty"`
}

// claims checks the required claims and converts to Claims.
func (t *tokenClaims) claims() (*Claims, error) {
	sub := strings.TrimSpace(t.Subject)
	email := strings.TrimSpace(t.Email)
	switch {
	case sub == "" && email == "":
		return nil, unauthorized("token has neither a sub nor an email claim")
	case sub == "":
		return nil, unauthorized("token has no sub claim")
	case email == "":
		return nil, unauthorized("token has no email claim")
	case !strings.Contains(email, "@"):
		// Shares match users by e-mail; anything else would never match
		// and would create a user nobody can share with.
		return nil, unauthorized(fmt.Sprintf("token's email claim %q is not an e-mail address", email))
	}
	c := &Claims{
		Subject: sub,
		Email:   email,
		Name:    strings.TrimSpace(t.Name),
		Groups:  []string(t.Groups),
		Roles:   []string(t.Roles),
	}
	if t.ExpiresAt != nil {
		c.Expiry = t.ExpiresAt.Time
	}
	return c, nil
}

// stringList decodes a JSON array of strings, and also a single string
// (some issuers send one group that way) or null. Empty strings are
// dropped; any other type is an error, which makes the token invalid.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	var items []string
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		items = []string{s}
	} else if err := json.Unmarshal(b, &items); err != nil {
		return fmt.Errorf("want a string or an array of strings: %w", err)
	}
	out := items[:0]
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	*l = out
	return nil
}
