package secret

import (
	"bytes"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := NewBox("a passphrase")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := b.Seal([]byte(`{"token":"hunter2"}`), []byte("source-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("hunter2")) {
		t.Fatal("sealed value holds the plain text")
	}
	again, _ := b.Seal([]byte(`{"token":"hunter2"}`), []byte("source-1"))
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of one value are equal: nonce reused")
	}
	plain, err := b.Open(sealed, []byte("source-1"))
	if err != nil || string(plain) != `{"token":"hunter2"}` {
		t.Fatalf("open: %q %v", plain, err)
	}
	if _, err := b.Open(sealed, []byte("source-2")); err == nil {
		t.Fatal("opened with another owner's associated data")
	}
	other, _ := NewBox("another passphrase")
	if _, err := other.Open(sealed, []byte("source-1")); err == nil {
		t.Fatal("opened with another key")
	}
	tampered := append([]byte{}, sealed...)
	tampered[len(tampered)-1] ^= 1
	if _, err := b.Open(tampered, []byte("source-1")); err == nil {
		t.Fatal("opened a tampered value")
	}
	none, _ := NewBox("")
	if _, err := none.Seal([]byte("x"), nil); !errors.Is(err, ErrNoKey) {
		t.Fatalf("seal without key: %v", err)
	}
}
