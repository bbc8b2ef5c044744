package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

const (
	gwAccess = "docindex-test"
	gwSecret = "docindex-test-secret-key"
)

// gateway is a versitygw process serving a temporary directory over S3 on a
// loopback port.
type gateway struct {
	endpoint string
	client   *s3.Client
	buckets  atomic.Int64
}

// versitygw finds the gateway binary: $DOCINDEX_VERSITYGW, else
// .tools/bin/versitygw at the module root, where scripts/s3gw.sh installs it.
func versitygw(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DOCINDEX_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("DOCINDEX_VERSITYGW=%s: %v (unset it to use the copy scripts/s3gw.sh installs in .tools/bin)", p, err)
		}
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
		t.Fatalf("the S3 gateway versitygw is not installed at %s: run scripts/s3gw.sh (or set DOCINDEX_VERSITYGW to its path)", p)
	}
	return p
}

// startGateway runs versitygw until the test ends.
func startGateway(t *testing.T) *gateway {
	t.Helper()
	bin := versitygw(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var out bytes.Buffer
	cmd := exec.Command(bin, "--access", gwAccess, "--secret", gwSecret, "--port", addr, "posix", t.TempDir())
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so the kill reaches anything it starts.
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
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("versitygw exited before listening (%v):\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen on %s within 15 s:\n%s", addr, out.String())
		}
	}
	g := &gateway{endpoint: "http://" + addr}
	g.client = s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(g.endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(gwAccess, gwSecret, ""),
	})
	return g
}

// bucket creates a new bucket and returns its name.
func (g *gateway) bucket(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("docindex-test-%d", g.buckets.Add(1))
	if _, err := g.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// url of a bucket on the gateway, with the keys in the URL.
func (g *gateway) url(bucket string) string {
	return fmt.Sprintf("s3://%s?endpoint=%s&region=us-east-1&use_path_style=true&access_key_id=%s&secret_access_key=%s",
		bucket, g.endpoint, gwAccess, gwSecret)
}

func TestS3Store(t *testing.T) {
	g := startGateway(t)
	testStore(t, func(t *testing.T) Store {
		s, err := Open(context.Background(), g.url(g.bucket(t)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})

	t.Run("CredentialsFromEnvironment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", gwAccess)
		t.Setenv("AWS_SECRET_ACCESS_KEY", gwSecret)
		t.Setenv("AWS_CONFIG_FILE", os.DevNull)
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
		url := fmt.Sprintf("s3://%s?endpoint=%s&region=us-east-1&use_path_style=true", g.bucket(t), g.endpoint)
		s, err := Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Put(context.Background(), "k", strings.NewReader("v"), ""); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Prefix", func(t *testing.T) {
		ctx := context.Background()
		bucket := g.bucket(t)
		prefixed, err := Open(ctx, strings.Replace(g.url(bucket), bucket+"?", bucket+"/tenant/a?", 1))
		if err != nil {
			t.Fatal(err)
		}
		defer prefixed.Close()
		if _, err := prefixed.Put(ctx, "files/1", strings.NewReader("under the prefix"), ""); err != nil {
			t.Fatal(err)
		}
		whole, err := Open(ctx, g.url(bucket))
		if err != nil {
			t.Fatal(err)
		}
		defer whole.Close()
		for key, want := range map[string]bool{"tenant/a/files/1": true, "files/1": false} {
			if ok, err := whole.Exists(ctx, key); err != nil || ok != want {
				t.Errorf("bucket key %q: exists %v (%v), want %v", key, ok, err, want)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		ctx := context.Background()
		bucket := g.bucket(t)
		for name, url := range map[string]string{
			"missing bucket": g.url("no-such-bucket"),
			"wrong secret":   strings.Replace(g.url(bucket), gwSecret, "not-the-secret", 1),
		} {
			s, err := Open(ctx, url)
			if err == nil {
				s.Close()
				t.Errorf("%s: Open succeeded", name)
				continue
			}
			if !strings.Contains(err.Error(), "bucket not accessible") || strings.Contains(err.Error(), gwSecret) {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := Open(ctx, g.url(bucket)); err != nil {
			t.Errorf("the right URL: %v", err)
		}
	})

	// The store sees what S3 clients see: a blob written through it is an
	// object any client can read.
	t.Run("PlainS3Object", func(t *testing.T) {
		ctx := context.Background()
		bucket := g.bucket(t)
		s, err := Open(ctx, g.url(bucket))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Put(ctx, "dir/doc.md", strings.NewReader("# Title"), "text/markdown"); err != nil {
			t.Fatal(err)
		}
		out, err := g.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/doc.md")})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(out.ContentType) != "text/markdown" || aws.ToInt64(out.ContentLength) != 7 {
			t.Errorf("object: type %q, length %d", aws.ToString(out.ContentType), aws.ToInt64(out.ContentLength))
		}
		var nf interface{ ErrorCode() string }
		_, err = g.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("dir/none")})
		if !errors.As(err, &nf) {
			t.Errorf("HeadObject of a missing key: %v", err)
		}
	})
}
