// Package blob stores uploaded files: a small Store interface over
// gocloud.dev/blob, backed by a local directory (fileblob) or S3-compatible
// object storage (s3blob).
//
// Open takes a URL:
//
//	file:///var/lib/docindex/blobs
//	s3://bucket?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true
//	s3://bucket/some/prefix?region=eu-west-1
//
// For s3, credentials come from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, shared files, instance
// roles) unless the URL carries access_key_id and secret_access_key (and
// optionally session_token). Other parameters are gocloud.dev's: region,
// endpoint, use_path_style, disable_https, profile, anonymous,
// request_checksum_calculation and the rest of gocloud.dev/aws's list. A path
// after the bucket puts every key under that prefix. The bucket must exist;
// Open checks that it can be reached.
//
// Uploads stream: Put copies from its reader in bounded parts (a temporary
// file next to the target for a directory; multipart uploads of 5 MiB parts,
// two at a time, for S3), so memory stays small whatever the size, and a
// failed or cancelled Put leaves any previous blob under the key untouched.
//
// Keys are slash-separated relative paths: see CheckKey.
package blob
