package blob

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	gcaws "gocloud.dev/aws"
	gcblob "gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
)

// Open opens the store a URL names: "file:///abs/dir" or "s3://bucket[/prefix]?..."
// (see the package documentation for the parameters).
func Open(ctx context.Context, rawURL string) (Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url's error repeats the URL, which may hold a secret key.
		return nil, errors.New("blob: open: the store URL does not parse")
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("blob: open file URL: host %q: want file:///absolute/dir", u.Host)
		}
		if u.RawQuery != "" {
			return nil, fmt.Errorf("blob: open file URL: parameters are not supported (%q)", u.RawQuery)
		}
		if !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("blob: open file URL: path %q is not absolute", u.Path)
		}
		return NewDir(u.Path)
	case "s3":
		return openS3(ctx, u)
	case "":
		return nil, errors.New("blob: open: the store URL has no scheme (want file:// or s3://)")
	default:
		return nil, fmt.Errorf("blob: open: unsupported scheme %q (want file or s3)", u.Scheme)
	}
}

// NewDir opens a store keeping each blob as a file under dir, which is
// created when missing.
func NewDir(dir string) (Store, error) {
	if dir == "" {
		return nil, errors.New("blob: directory store: empty path")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: directory store %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("blob: directory store: %w", err)
	}
	b, err := fileblob.OpenBucket(abs, &fileblob.Options{
		// Temporary files go next to their target rather than to os.TempDir:
		// the final rename must not cross file systems.
		NoTempDir:   true,
		DirFileMode: 0o750,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: directory store %q: %w", abs, err)
	}
	return &store{bucket: b, where: "file://" + abs, root: abs}, nil
}

func openS3(ctx context.Context, u *url.URL) (Store, error) {
	where := "s3://" + u.Host + u.Path
	if u.Host == "" {
		return nil, errors.New("blob: open s3 URL: no bucket (want s3://bucket?...)")
	}
	q := u.Query()
	take := func(key string) string {
		v := q.Get(key)
		q.Del(key)
		return v
	}
	s3opts := []func(*s3.Options){func(o *s3.Options) {
		// Reading back a multipart upload would log "Skipped validation of
		// multipart checksum" on every open: S3 has no whole-object checksum
		// for those. Expected, so not worth a warning.
		o.DisableLogOutputChecksumValidationSkipped = true
	}}
	for _, key := range []string{"use_path_style", "s3ForcePathStyle", "disable_https"} {
		v := take(key)
		if v == "" {
			continue
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("blob: open %s: parameter %s: %w", where, key, err)
		}
		if key == "disable_https" {
			s3opts = append(s3opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = on })
		} else {
			s3opts = append(s3opts, func(o *s3.Options) { o.UsePathStyle = on })
		}
	}
	id, secret, token := take("access_key_id"), take("secret_access_key"), take("session_token")
	if (id == "") != (secret == "") {
		return nil, fmt.Errorf("blob: open %s: access_key_id and secret_access_key go together", where)
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", where, err)
	}
	if id != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, token))
	}
	client := s3.NewFromConfig(cfg, s3opts...)
	b, err := s3blob.OpenBucket(ctx, client, u.Host, &s3blob.Options{
		// As gocloud's own URL opener does: the upload manager reads this
		// setting only from here.
		RequestChecksumCalculation: cfg.RequestChecksumCalculation,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: open %s: %w", where, err)
	}
	// Fail at start-up, not on the first upload, when the bucket is missing
	// or the credentials are wrong.
	ok, err := b.IsAccessible(ctx)
	if err != nil || !ok {
		_ = b.Close()
		if err == nil {
			err = errors.New("bucket not found")
		}
		return nil, fmt.Errorf("blob: open %s: bucket not accessible: %w", where, err)
	}
	if prefix := strings.Trim(u.Path, "/"); prefix != "" {
		if err := CheckKey(prefix); err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("blob: open %s: prefix: %w", where, err)
		}
		b = gcblob.PrefixedBucket(b, prefix+"/")
	}
	return &store{bucket: b, where: where}, nil
}
