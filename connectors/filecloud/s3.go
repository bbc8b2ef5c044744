package filecloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/docindex/docindex/plugins"
	"github.com/docindex/docindex/plugins/connector"
)

// s3Source reads the objects of a bucket below a prefix. It talks to S3
// with the AWS SDK directly (the client gocloud.dev's s3blob wraps), so that
// keys come back exactly as stored (s3blob escapes and unescapes some) and
// the ETag of every listed object is at hand.
type s3Source struct {
	s      *settings
	client *s3.Client
}

func newS3(s *settings, rt http.RoundTripper, health bool) *s3Source {
	o := s3.Options{
		Region:       s.Region,
		UsePathStyle: s.path,
		HTTPClient:   &http.Client{Transport: rt},
		Credentials:  aws.AnonymousCredentials{},
		// Checksums only where the API requires them: many gateways do not
		// implement the newer checksum headers.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if s.AccessKeyID != "" {
		o.Credentials = credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, "")
	}
	if s.base != nil {
		o.BaseEndpoint = aws.String(s.URL)
	}
	if health {
		o.RetryMaxAttempts = 1 // a probe: report what is, do not wait it out
	}
	return &s3Source{s: s, client: s3.New(o)}
}

func (b *s3Source) describe() string {
	return fmt.Sprintf("S3 bucket %s, prefix %q", b.s.Bucket, b.s.prefix)
}

func (b *s3Source) webURL(id string) string {
	key := b.s.prefix + id
	escaped := escapeKey(key)
	switch {
	case b.s.base == nil:
		return fmt.Sprintf("https://%s.s3.%s.amazonaws.com/%s", b.s.Bucket, b.s.Region, escaped)
	case b.s.path:
		u := *b.s.base
		return strings.TrimSuffix(u.String(), "/") + "/" + url.PathEscape(b.s.Bucket) + "/" + escaped
	default:
		u := *b.s.base
		u.Host = b.s.Bucket + "." + u.Host
		return strings.TrimSuffix(u.String(), "/") + "/" + escaped
	}
}

// escapeKey escapes each segment of a key for a URL path.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (b *s3Source) check(ctx context.Context) error {
	_, err := b.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket:  aws.String(b.s.Bucket),
		Prefix:  aws.String(b.s.prefix),
		MaxKeys: aws.Int32(1),
	})
	if err != nil {
		return s3Error("s3: list bucket "+b.s.Bucket, err)
	}
	return nil
}

func (b *s3Source) walk(ctx context.Context, _ *filter, fn func(entry) bool) error {
	// One flat listing without a delimiter: S3 has no folders to prune, and
	// a delimiter would cost a request per "folder".
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(b.s.Bucket),
		Prefix: aws.String(b.s.prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return s3Error("s3: list bucket "+b.s.Bucket, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			id, ok := strings.CutPrefix(key, b.s.prefix)
			// Keys ending in "/" are folder markers that consoles create.
			if !ok || id == "" || strings.HasSuffix(id, "/") {
				continue
			}
			e := entry{id: id, size: aws.ToInt64(o.Size), etag: aws.ToString(o.ETag)}
			if o.LastModified != nil {
				e.modified = *o.LastModified
			}
			if !fn(e) {
				return nil
			}
		}
	}
	return nil
}

func (b *s3Source) open(ctx context.Context, id string) (*connector.Content, error) {
	key := b.s.prefix + id
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.s.Bucket), Key: aws.String(key)})
	if err != nil {
		return nil, s3Error(fmt.Sprintf("s3: get %s/%s", b.s.Bucket, key), err)
	}
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	var modified time.Time
	if out.LastModified != nil {
		modified = *out.LastModified
	}
	c := &connector.Content{
		ContentType: aws.ToString(out.ContentType),
		Size:        size,
		Version:     version(aws.ToString(out.ETag), size, modified),
		Body:        out.Body,
	}
	return c, nil
}

// s3Error maps the SDK's errors: HTTP statuses to the plugin SDK's errors,
// with the S3 error code, which says more than the status (NoSuchBucket,
// SignatureDoesNotMatch).
func s3Error(op string, err error) error {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() == 0 {
		// No answer: the network error says it all, without the SDK's
		// retry and request-id boilerplate around it.
		var ne *net.OpError
		if errors.As(err, &ne) {
			return fmt.Errorf("%s: cannot reach the endpoint: %w", op, ne)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	status := re.HTTPStatusCode()
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	detail := ""
	if code != "" {
		detail = ", " + code
	}
	switch code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed",
		"XAdminUserNotFound": // versitygw's answer (a 404) to an unknown access key
		// S3 answers 403 for rejected credentials: not a permission a
		// policy could grant, but credentials to fix.
		return fmt.Errorf("%s: the server refused the credentials (HTTP %d%s): %w", op, status, detail, plugins.ErrUnauthenticated)
	case "NoSuchBucket":
		return fmt.Errorf("%s: the bucket does not exist (HTTP %d%s): %w", op, status, detail, plugins.ErrNotFound)
	}
	return statusError(op, status, detail)
}
