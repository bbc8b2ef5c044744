package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
)

// KeyPrefix starts every docindex API key, so a key is told apart from a
// JWT at a glance (and by secret scanners).
const KeyPrefix = "dik_"

// keyBytes is the randomness in a key: 256 bits, 43 base64url characters.
const keyBytes = 32

// NewKey returns a new API key, KeyPrefix followed by 43 base64url
// characters (32 random bytes), and its hash: only the hash is stored, the
// raw key is shown once to whoever created it.
func NewKey() (raw string, hash []byte, err error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("new api key: %w", err)
	}
	raw = KeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return raw, HashKey(raw), nil
}

// HashKey returns the SHA-256 of the raw key, the value stored and looked
// up. A plain hash suffices (no salt, no slow KDF): the key has 256 bits of
// entropy, so there is nothing to brute-force, and lookup by hash stays an
// index probe.
func HashKey(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}

// IsKey reports whether token is meant as an API key rather than a JWT. It
// checks the prefix only: a malformed "dik_..." token should fail as an
// unknown key (its hash matches nothing), not as a malformed JWT.
func IsKey(token string) bool {
	return strings.HasPrefix(token, KeyPrefix)
}
