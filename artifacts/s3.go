package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// EnvS3PathStyle forces path-style addressing (http://host/bucket/key) when set to 1 or true. It is on
// by default whenever an endpoint URL is configured, as MinIO and most S3-compatible servers want.
const EnvS3PathStyle = "RLSWEEP_S3_PATH_STYLE"

// Retry policy of every S3 request: an outage of a minute is ridden out by the SDK itself, so a MinIO
// restart or a network blip never fails a trial. With the base and cap below, the sleeps before the
// 2nd…20th attempts add up to at least 63 s and at most 128 s.
const (
	s3MaxAttempts = 20
	s3BaseBackoff = 500 * time.Millisecond
	s3MaxBackoff  = 8 * time.Second
)

// s3ConnectTimeout bounds each attempt's TCP connect. An endpoint that drops packets (a partition, a
// blackhole route, a stale neighbour entry) then fails the attempt within seconds and the retryer logs
// and retries it, where the SDK's default of 30 s per attempt would hold a call silent for minutes.
const s3ConnectTimeout = 5 * time.Second

// MultipartThreshold is the object size from which Put uploads in parts (of this size), through the
// SDK's transfer manager.
const MultipartThreshold = 16 << 20

// S3 is a Store in an S3 bucket (or an S3-compatible server such as MinIO), under a key prefix.
//
// Writes are atomic because S3 makes them so: a PutObject, or the CompleteMultipartUpload of a large
// object, replaces the whole object at once, and the parts of an unfinished multipart upload are never
// visible under the key (a failed upload is aborted). No temporary object is ever written.
type S3 struct {
	client   *s3.Client
	transfer *transfermanager.Client
	bucket   string
	prefix   string // "" or a clean key without a trailing slash
}

// Logger is what a store reports retried requests to; the Temporal SDK's log.Logger is one.
type Logger interface {
	Warn(msg string, keyvals ...any)
}

// Option configures a store as Open or NewS3 make it.
type Option func(*options)

type options struct{ logger Logger }

// WithLogger makes the S3 store log every failed request it retries: its operation, bucket and key,
// the attempt and the error. A local store has nothing to retry and ignores it.
func WithLogger(l Logger) Option { return func(o *options) { o.logger = l } }

// bucketName is what S3 accepts as a bucket name (and a little more: the server has the last word).
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ParseS3URL splits s3://bucket/prefix into its bucket and its prefix (without trailing slash).
func ParseS3URL(url string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(url, "s3://")
	if !ok {
		return "", "", fmt.Errorf("artifact store: got %q, want s3://bucket/prefix", url)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if strings.ContainsAny(bucket, "@:") {
		// The value is not echoed: it may hold credentials.
		return "", "", errors.New("artifact store: the s3:// URL holds user information or a port, want s3://bucket/prefix (credentials come from the AWS credential chain)")
	}
	if !bucketName.MatchString(bucket) {
		return "", "", fmt.Errorf("artifact store: bucket %q in %q, want 3–63 lowercase letters, digits, '.' or '-'", bucket, url)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		if _, err := CleanKey(prefix); err != nil {
			return "", "", fmt.Errorf("artifact store: prefix of %q: %w", url, err)
		}
	}
	return bucket, prefix, nil
}

// NewS3 opens the store an s3://bucket/prefix URL names. Credentials, region and endpoint come from the
// AWS SDK's standard chain (AWS_ACCESS_KEY_ID…, AWS_PROFILE, ~/.aws, IAM roles; AWS_REGION;
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL). Nothing is sent over the network until the first call.
func NewS3(ctx context.Context, url string, opts ...Option) (*S3, error) {
	bucket, prefix, err := ParseS3URL(url)
	if err != nil {
		return nil, err
	}
	var so options
	for _, opt := range opts {
		opt(&so)
	}
	httpClient := awshttp.NewBuildableClient().WithDialerOptions(func(d *net.Dialer) { d.Timeout = s3ConnectTimeout })
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryer(newS3Retryer), config.WithHTTPClient(httpClient))
	if err != nil {
		return nil, fmt.Errorf("artifact store %s: AWS configuration: %w", url, err)
	}
	endpoint := cfg.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	if cfg.Region == "" && endpoint {
		cfg.Region = "us-east-1" // S3-compatible servers accept any region; the SDK refuses none
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = endpoint || pathStyleForced()
		// A multipart object has no whole-object checksum to validate; that is expected, not news.
		o.DisableLogOutputChecksumValidationSkipped = true
		if so.logger != nil {
			o.APIOptions = append(o.APIOptions, logRetries(so.logger, o.Retryer))
		}
	})
	transfer := transfermanager.New(client, func(o *transfermanager.Options) {
		o.MultipartUploadThreshold = MultipartThreshold
		o.PartSizeBytes = MultipartThreshold
		// Abort a failed multipart upload even when ctx is what failed, so no parts linger.
		o.FailTimeout = time.Minute
	})
	return &S3{client: client, transfer: transfer, bucket: bucket, prefix: prefix}, nil
}

func pathStyleForced() bool {
	v := strings.ToLower(os.Getenv(EnvS3PathStyle))
	return v == "1" || v == "true" || v == "yes"
}

// newS3Retryer is the SDK's standard retryer with more attempts, a longer, capped backoff and no
// client-side retry quota (whose default of 100 retries would give up in the middle of an outage).
func newS3Retryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = s3MaxAttempts
		o.MaxBackoff = s3MaxBackoff
		o.Backoff = equalJitter{base: s3BaseBackoff, max: s3MaxBackoff}
		o.RateLimiter = ratelimit.None
	})
}

// retryLogState is one call's, kept across its attempts: what it is about and how many attempts it made.
type retryLogState struct {
	bucket, key string
	attempts    int
}

type retryLogKey struct{}

// logRetries adds to a call's stack a middleware before the retryer, which notes the call's bucket and
// key, and one inside the retry loop, which sees every attempt and logs those that failed with an error
// the retryer will retry (the last attempt's error is the caller's to report).
func logRetries(l Logger, r aws.Retryer) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("rlsweepRetryLogCall",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				bucket, key := requestObject(in.Parameters)
				ctx = middleware.WithStackValue(ctx, retryLogKey{}, &retryLogState{bucket: bucket, key: key})
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		if err != nil {
			return err
		}
		return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("rlsweepRetryLogAttempt",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleFinalize(ctx, in)
				st, _ := middleware.GetStackValue(ctx, retryLogKey{}).(*retryLogState)
				if st == nil {
					return out, md, err
				}
				st.attempts++
				if err != nil && st.attempts < r.MaxAttempts() && r.IsErrorRetryable(err) && ctx.Err() == nil {
					l.Warn("artifact store: S3 request failed, retrying", "operation", awsmiddleware.GetOperationName(ctx),
						"bucket", st.bucket, "key", st.key, "attempt", st.attempts, "max_attempts", r.MaxAttempts(), "error", err)
				}
				return out, md, err
			}), "Retry", middleware.After)
	}
}

// requestObject returns the bucket and the key (or, for a listing, the prefix) an S3 call is about.
func requestObject(params any) (bucket, key string) {
	switch p := params.(type) {
	case *s3.GetObjectInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.PutObjectInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.HeadObjectInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.CreateMultipartUploadInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.UploadPartInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.CompleteMultipartUploadInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.AbortMultipartUploadInput:
		return aws.ToString(p.Bucket), aws.ToString(p.Key)
	case *s3.ListObjectsV2Input:
		return aws.ToString(p.Bucket), aws.ToString(p.Prefix)
	}
	return "", ""
}

// equalJitter sleeps d/2 + rand(d/2) before retry attempt n, with d = min(max, base·2^(n-1)): random
// enough that workers do not retry in lockstep, never so short that twenty attempts pass in a blink.
type equalJitter struct{ base, max time.Duration }

// BackoffDelay implements retry.BackoffDelayer.
func (j equalJitter) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := j.max
	if attempt < 30 {
		d = min(j.max, j.base<<max(attempt-1, 0))
	}
	return d/2 + rand.N(d/2+1), nil
}

// Bucket returns the store's bucket.
func (s *S3) Bucket() string { return s.bucket }

// Prefix returns the store's key prefix ("" for the bucket's root).
func (s *S3) Prefix() string { return s.prefix }

// objectKey is the S3 key of a store key: the prefix, then the key, which CleanKey has vetted.
func (s *S3) objectKey(key string) (string, error) {
	k, err := CleanKey(key)
	if err != nil {
		return "", err
	}
	if s.prefix == "" {
		return k, nil
	}
	return s.prefix + "/" + k, nil
}

// Put uploads the object: one PutObject, or a multipart upload through the transfer manager from
// MultipartThreshold bytes on. Either becomes visible only when complete.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) error {
	k, err := s.objectKey(key)
	if err != nil {
		return err
	}
	_, err = s.transfer.UploadObject(ctx, &transfermanager.UploadObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(k), Body: r,
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", s.URL(key), err)
	}
	return nil
}

// Get opens the object; the error wraps ErrNotFound when there is none.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := s.objectKey(key)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if isNotFound(err) {
		return nil, fmt.Errorf("get %s: %w", s.URL(key), ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", s.URL(key), err)
	}
	return out.Body, nil
}

func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound")
}

// List returns the keys under the store's prefix that start with prefix, sorted, page by page.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	if strings.Contains(prefix, "..") || strings.HasPrefix(prefix, "/") || strings.Contains(prefix, "\\") {
		return nil, fmt.Errorf("list: prefix %q, want a relative key prefix without '..' or backslashes", prefix)
	}
	root := ""
	if s.prefix != "" {
		root = s.prefix + "/"
	}
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket), Prefix: aws.String(root + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.URL(prefix), err)
		}
		for _, o := range page.Contents {
			if k, ok := strings.CutPrefix(aws.ToString(o.Key), root); ok {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// URL returns s3://bucket/prefix/key.
func (s *S3) URL(key string) string {
	if s.prefix == "" {
		return "s3://" + s.bucket + "/" + key
	}
	return "s3://" + s.bucket + "/" + s.prefix + "/" + key
}
