package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"testing"
)

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		raw, hash, err := NewKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != len(KeyPrefix)+43 || !IsKey(raw) {
			t.Fatalf("key %q: want %q + 43 characters", raw, KeyPrefix)
		}
		b, err := base64.RawURLEncoding.Strict().DecodeString(raw[len(KeyPrefix):])
		if err != nil || len(b) != 32 {
			t.Fatalf("key %q does not carry 32 base64url bytes: %v", raw, err)
		}
		want := sha256.Sum256([]byte(raw))
		if !bytes.Equal(hash, want[:]) || !bytes.Equal(HashKey(raw), hash) {
			t.Fatalf("hash of %q is not its SHA-256", raw)
		}
		if seen[raw] {
			t.Fatalf("key %q generated twice", raw)
		}
		seen[raw] = true
	}
}

func TestIsKey(t *testing.T) {
	tok, err := MintHS256(testSecret, alice, 0)
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]bool{
		"dik_abc": true, // malformed keys are still keys: they fail the lookup
		tok:       false,
		"":        false,
		"DIK_abc": false,
		"dik":     false,
	} {
		if got := IsKey(tok); got != want {
			t.Errorf("IsKey(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header []string
		want   string
		ok     bool
	}{
		{nil, "", false},
		{[]string{""}, "", false},
		{[]string{"Bearer abc.def"}, "abc.def", true},
		{[]string{"bearer abc"}, "abc", true},
		{[]string{"BEARER abc"}, "abc", true},
		{[]string{"  Bearer   abc  "}, "abc", true},
		{[]string{"Bearer"}, "", false},
		{[]string{"Bearer "}, "", false},
		{[]string{"Bearer a b"}, "", false},
		{[]string{"Basic dXNlcjpwYXNz"}, "", false},
		{[]string{"Bearerabc"}, "", false},
		{[]string{"Token abc"}, "", false},
		{[]string{"Bearer first", "Bearer second"}, "first", true},
	}
	for _, tt := range tests {
		r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tt.header {
			r.Header.Add("Authorization", h)
		}
		got, ok := BearerToken(r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
