package filecloud_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Credentials of the test servers. The passwords are long and distinctive
// so that a test can search errors and logs for them.
const (
	davUser     = "alice"
	davPassword = "dav-Pa55word-never-shown"
	s3Access    = "docindex-access"
	s3Secret    = "s3-Secret-Key-never-shown"
)

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// lockedBuffer collects a server's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProcess runs a server until the test ends and waits until addr
// accepts connections.
func startProcess(t *testing.T, addr, bin string, args ...string) {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "RCLONE_CONFIG="+filepath.Join(t.TempDir(), "rclone.conf"))
	// Its own process group, so that the kill reaches anything it starts.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("%s exited before listening on %s (%v):\n%s", filepath.Base(bin), addr, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within 15s:\n%s", filepath.Base(bin), addr, out.String())
		}
	}
}

// startWebDAV serves dir with `rclone serve webdav` and returns its URL.
func startWebDAV(t *testing.T, dir string) string {
	t.Helper()
	bin, err := exec.LookPath("rclone")
	if err != nil {
		t.Fatal("rclone is not installed: run scripts/filecloud-deps.sh as root (or apt-get install rclone)")
	}
	addr := freeAddr(t)
	// No directory cache: the tests change files on disk and sync at once.
	startProcess(t, addr, bin, "serve", "webdav", "--addr", addr, "--user", davUser, "--pass", davPassword,
		"--dir-cache-time", "0s", "--log-level", "ERROR", dir)
	return "http://" + addr + "/"
}

// versitygw finds the S3 gateway: $DOCINDEX_VERSITYGW, else .tools/bin at
// the module root, where scripts/s3gw.sh installs it.
func versitygw(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCINDEX_VERSITYGW"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod) not found above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, ".tools", "bin", "versitygw")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the S3 gateway versitygw is not installed at %s: run scripts/filecloud-deps.sh (or scripts/s3gw.sh)", p)
	}
	return p
}

// s3Server is a versitygw gateway with a client for arranging objects.
type s3Server struct {
	endpoint string
	dir      string // the gateway's directory: one folder per bucket
	client   *s3.Client
}

func startS3(t *testing.T) *s3Server {
	t.Helper()
	addr := freeAddr(t)
	dir := t.TempDir()
	startProcess(t, addr, versitygw(t), "--access", s3Access, "--secret", s3Secret, "--port", addr, "posix", dir)
	endpoint := "http://" + addr
	return &s3Server{
		endpoint: endpoint,
		dir:      dir,
		client: s3.New(s3.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(endpoint),
			UsePathStyle: true,
			Credentials:  credentials.NewStaticCredentialsProvider(s3Access, s3Secret, ""),
		}),
	}
}

func (g *s3Server) createBucket(t *testing.T, name string) {
	t.Helper()
	if _, err := g.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}

func (g *s3Server) put(t *testing.T, bucket, key string, data []byte, contentType string) {
	t.Helper()
	if err := g.putErr(bucket, key, data, contentType); err != nil {
		t.Fatal(err)
	}
}

func (g *s3Server) putErr(bucket, key string, data []byte, contentType string) error {
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	if _, err := g.client.PutObject(context.Background(), in); err != nil {
		return fmt.Errorf("put %s/%s: %w", bucket, key, err)
	}
	return nil
}

func (g *s3Server) remove(t *testing.T, bucket, key string) {
	t.Helper()
	if _, err := g.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatalf("delete %s/%s: %v", bucket, key, err)
	}
}

// writeFile writes a file below dir, creating its folders. A rewrite gets
// a modification time after the old one whatever the file system's
// timestamp granularity: rclone's ETags derive from size and mtime.
func writeFile(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now()
	if old, err := os.Stat(p); err == nil && !mtime.After(old.ModTime()) {
		mtime = old.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustNotContain(t *testing.T, what, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s contains a secret: %s", what, s)
		}
	}
}
