package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// version prefixes every sealed value so the format can change later.
const version byte = 1

// ErrNoKey is returned when secrets must be sealed or opened but no key is configured.
var ErrNoKey = errors.New("secret: no key configured (set DOCINDEX_SECRET_KEY)")

// Box seals and opens values under one key.
type Box struct{ aead cipher.AEAD }

// NewBox derives a 256-bit key from key: a base64 string of exactly 32 bytes is used as is,
// anything else is hashed with SHA-256 (so a passphrase works too). An empty key gives a Box that
// refuses to seal or open.
func NewBox(key string) (*Box, error) {
	if key == "" {
		return &Box{}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		sum := sha256.Sum256([]byte(key))
		raw = sum[:]
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain with a fresh nonce; ad binds the value to its owner (a source id), so a
// sealed value copied to another row does not open.
func (b *Box) Seal(plain, ad []byte) ([]byte, error) {
	if b.aead == nil {
		return nil, ErrNoKey
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plain, ad), nil
}

// Open decrypts a value made by Seal with the same ad.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	if b.aead == nil {
		return nil, ErrNoKey
	}
	n := b.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != version {
		return nil, errors.New("secret: malformed sealed value")
	}
	plain, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad)
	if err != nil {
		return nil, errors.New("secret: cannot open (wrong key or tampered value)")
	}
	return plain, nil
}
