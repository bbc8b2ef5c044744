package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// testStore is the conformance suite every Store passes. open returns a fresh,
// empty store; the suite closes it.
func testStore(t *testing.T, open func(t *testing.T) Store) {
	ctx := context.Background()
	put := func(t *testing.T, s Store, key, content string) {
		t.Helper()
		n, err := s.Put(ctx, key, strings.NewReader(content), "text/plain")
		if err != nil {
			t.Fatalf("Put %q: %v", key, err)
		}
		if n != int64(len(content)) {
			t.Fatalf("Put %q: %d bytes written, want %d", key, n, len(content))
		}
	}
	read := func(t *testing.T, s Store, key string) string {
		t.Helper()
		r, err := s.Open(ctx, key)
		if err != nil {
			t.Fatalf("Open %q: %v", key, err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read %q: %v", key, err)
		}
		return string(b)
	}
	exists := func(t *testing.T, s Store, key string) bool {
		t.Helper()
		ok, err := s.Exists(ctx, key)
		if err != nil {
			t.Fatalf("Exists %q: %v", key, err)
		}
		return ok
	}
	run := func(name string, f func(t *testing.T, s Store)) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			f(t, s)
		})
	}

	run("RoundTrip", func(t *testing.T, s Store) {
		for _, key := range []string{"plain", "files/0b1c/original.pdf", "spaces and ünïcode/…/x y.txt", "a.b/c-d_e~f@g"} {
			content := "content of " + key
			put(t, s, key, content)
			if !exists(t, s, key) {
				t.Errorf("Exists %q = false after Put", key)
			}
			if got := read(t, s, key); got != content {
				t.Errorf("%q holds %q, want %q", key, got, content)
			}
		}
		// An empty blob is a blob.
		put(t, s, "empty", "")
		if !exists(t, s, "empty") || read(t, s, "empty") != "" {
			t.Error("empty blob not stored")
		}
	})

	run("Overwrite", func(t *testing.T, s Store) {
		put(t, s, "k", "first version, longer than the second")
		put(t, s, "k", "second")
		if got := read(t, s, "k"); got != "second" {
			t.Errorf("after overwrite: %q", got)
		}
	})

	run("Missing", func(t *testing.T, s Store) {
		if _, err := s.Open(ctx, "no/such/key"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open of a missing key: %v, want ErrNotFound", err)
		}
		if exists(t, s, "no/such/key") {
			t.Error("Exists of a missing key = true")
		}
		if err := s.Delete(ctx, "no/such/key"); err != nil {
			t.Errorf("Delete of a missing key: %v", err)
		}
	})

	run("Delete", func(t *testing.T, s Store) {
		put(t, s, "d/one", "1")
		put(t, s, "d/two", "2")
		if err := s.Delete(ctx, "d/one"); err != nil {
			t.Fatal(err)
		}
		if exists(t, s, "d/one") {
			t.Error("deleted blob still exists")
		}
		if _, err := s.Open(ctx, "d/one"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Open of a deleted key: %v", err)
		}
		if read(t, s, "d/two") != "2" {
			t.Error("deleting one blob touched its neighbour")
		}
		if err := s.Delete(ctx, "d/one"); err != nil {
			t.Errorf("second Delete: %v", err)
		}
	})

	run("InvalidKeys", func(t *testing.T, s Store) {
		for _, key := range []string{"", "/etc/passwd", "../outside", "a/../../outside", "a/./b", "a//b", "dir/", ".", "..",
			`a\b`, "nul\x00byte", "new\nline", "x.attrs", strings.Repeat("k", 1025), "bad\xffutf8"} {
			if _, err := s.Put(ctx, key, strings.NewReader("x"), ""); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Put %q: %v, want ErrInvalidKey", key, err)
			}
			if _, err := s.Open(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Open %q: %v, want ErrInvalidKey", key, err)
			}
			if _, err := s.Exists(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Exists %q: %v, want ErrInvalidKey", key, err)
			}
			if err := s.Delete(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Delete %q: %v, want ErrInvalidKey", key, err)
			}
		}
	})

	run("FailedPutKeepsPrevious", func(t *testing.T, s Store) {
		put(t, s, "k", "good")
		boom := errors.New("client went away")
		broken := io.MultiReader(strings.NewReader(strings.Repeat("partial ", 1000)), errReader{boom})
		if _, err := s.Put(ctx, "k", broken, ""); !errors.Is(err, boom) {
			t.Fatalf("Put from a failing reader: %v, want the reader's error", err)
		}
		if got := read(t, s, "k"); got != "good" {
			t.Errorf("after a failed Put the blob holds %q", got[:min(len(got), 20)])
		}
		broken = io.MultiReader(strings.NewReader("partial"), errReader{boom})
		if _, err := s.Put(ctx, "fresh", broken, ""); err == nil {
			t.Fatal("Put from a failing reader succeeded")
		}
		if exists(t, s, "fresh") {
			t.Error("a failed Put left a blob")
		}
	})

	run("CancelledPut", func(t *testing.T, s Store) {
		cctx, cancel := context.WithCancel(ctx)
		r := &genReader{size: 64 << 20, onRead: func(done int64) {
			if done >= 8<<20 {
				cancel()
			}
		}}
		if _, err := s.Put(cctx, "cancelled", r, ""); err == nil {
			t.Fatal("Put with a cancelled context succeeded")
		}
		if exists(t, s, "cancelled") {
			t.Error("a cancelled Put left a blob")
		}
	})

	run("LargeStreamBoundedMemory", func(t *testing.T, s Store) {
		const size = 200 << 20
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapAlloc, ms.HeapAlloc
		src := &genReader{size: size, onRead: func(int64) {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}}
		n, err := s.Put(ctx, "large/blob.bin", src, "application/octet-stream")
		if err != nil {
			t.Fatal(err)
		}
		if n != size {
			t.Fatalf("%d bytes written, want %d", n, size)
		}
		// Buffering the upload would need 200 MiB. Streaming S3 holds 5 MiB
		// parts (two in flight, one filling) and Go lets garbage reach the
		// live heap's size before collecting: about 40 MiB.
		const limit = 96 << 20
		if grew := peak - min(peak, base); grew > limit {
			t.Errorf("heap grew by %d MiB while streaming 200 MiB, limit %d MiB", grew>>20, limit>>20)
		} else {
			t.Logf("heap grew by at most %.1f MiB while streaming 200 MiB", float64(grew)/(1<<20))
		}
		r, err := s.Open(ctx, "large/blob.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got := sha256.New()
		if _, err := io.Copy(got, r); err != nil {
			t.Fatal(err)
		}
		want := sha256.New()
		if _, err := io.Copy(want, &genReader{size: size}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
			t.Error("the large blob reads back different")
		}
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// genReader produces size deterministic bytes without holding them: a random
// 1 MiB block, each copy stamped with its index so no two MiB are alike.
// onRead, when set, is called after every MiB.
type genReader struct {
	size, done int64
	block      []byte
	onRead     func(done int64)
}

func (g *genReader) Read(p []byte) (int, error) {
	const blockSize = 1 << 20
	if g.block == nil {
		g.block = make([]byte, blockSize)
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < blockSize; i += 8 {
			binary.LittleEndian.PutUint64(g.block[i:], r.Uint64())
		}
	}
	if g.done >= g.size {
		return 0, io.EOF
	}
	off := g.done % blockSize
	n := copy(p, g.block[off:min(int64(blockSize), off+g.size-g.done)])
	// Stamp the block index over the first 8 bytes of each block.
	if off < 8 {
		var idx [8]byte
		binary.LittleEndian.PutUint64(idx[:], uint64(g.done/blockSize))
		copy(p[:min(n, int(8-off))], idx[off:])
	}
	before := g.done
	g.done += int64(n)
	if g.onRead != nil && before/blockSize != g.done/blockSize {
		g.onRead(g.done)
	}
	return n, nil
}
