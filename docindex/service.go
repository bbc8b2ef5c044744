package docindex

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/docindex/docindex/docindex/auth"
	"github.com/docindex/docindex/docindex/blob"
	"github.com/docindex/docindex/docindex/embedbatch"
	"github.com/docindex/docindex/docindex/extract"
	"github.com/docindex/docindex/docindex/images"
	"github.com/docindex/docindex/docindex/queue"
	"github.com/docindex/docindex/docindex/secret"
	"github.com/docindex/docindex/docindex/vectorstore"
	"github.com/docindex/docindex/plugins/embedder"
	"github.com/docindex/docindex/plugins/llm"
)

// Service is the docindex library: collections, shares, API keys, files and jobs over one database.
type Service struct {
	db            *bun.DB
	log           *slog.Logger
	verifier      auth.Verifier
	embedders     embedder.Embedder
	batchOpts     []embedbatch.Option // non-nil: WithEmbedBatching was given
	defaultModels []string
	blobs         blob.Store
	queue         *queue.Queue
	vectors       *vectorstore.Store
	vectorOpts    []vectorstore.Option
	running       atomic.Int64 // jobs this process is running (Handle), which the index merge yields to
	maxUpload     int64
	queueOpts     []queue.Option
	extractor     *extract.Extractor
	connectors    Connectors
	secretKey     string
	box           *secret.Box
	holder        string // this process, in sync runs and leases

	describer    images.Describer // nil: image descriptions are not produced
	describerSet bool             // WithImageDescriber was given, so no default is chosen
	imageFinder  *images.Collector

	llm          llm.LLM // nil: structured extraction is skipped with a warning
	extractModel string  // "": the first model llm lists

	// lastUsed throttles API-key lastUsedAt writes to one per key per minute: a write on every
	// request would cost more than the request itself.
	lastUsedMu sync.Mutex
	lastUsed   map[uuid.UUID]time.Time
}

// Option configures a Service.
type Option func(*Service)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithVerifier sets how bearer tokens that are not API keys are verified (JWT HS256, OIDC or
// both through auth.Chain). Without one only API keys authenticate.
func WithVerifier(v auth.Verifier) Option { return func(s *Service) { s.verifier = v } }

// WithEmbedders sets the embedding models the service may use; a *pluginhost.Host fits.
func WithEmbedders(e embedder.Embedder) Option { return func(s *Service) { s.embedders = e } }

// WithEmbedBatching merges the embedding calls of concurrent indexing jobs into calls of up to
// a batch of texts (embedbatch.New with opts): an embedder with a per-call latency (a server,
// a plugin) is then kept busy at a good batch size instead of one file's chunks per call.
// Single-text calls (search queries) still go straight to the embedder.
func WithEmbedBatching(opts ...embedbatch.Option) Option {
	return func(s *Service) { s.batchOpts = append([]embedbatch.Option{}, opts...) }
}

// WithDefaultEmbeddingModel sets the model of collections created without one: the first of ids
// that the catalog holds (empty ids are skipped), else the first model the embedders list.
func WithDefaultEmbeddingModel(ids ...string) Option {
	return func(s *Service) { s.defaultModels = append(s.defaultModels, ids...) }
}

// WithBlobStore sets where uploaded files are kept (a directory or S3-compatible storage).
func WithBlobStore(b blob.Store) Option { return func(s *Service) { s.blobs = b } }

// WithMaxUploadBytes bounds the size of one uploaded file (default 100 MiB).
func WithMaxUploadBytes(n int64) Option { return func(s *Service) { s.maxUpload = n } }

// WithQueueOptions passes options (lease, backoff) to the job queue.
func WithQueueOptions(opts ...queue.Option) Option {
	return func(s *Service) { s.queueOpts = append(s.queueOpts, opts...) }
}

// WithVectorStoreOptions passes options to the chunk store, such as the bound on the chunks
// waiting for the HNSW index (vectorstore.WithMaxPending).
func WithVectorStoreOptions(opts ...vectorstore.Option) Option {
	return func(s *Service) { s.vectorOpts = append(s.vectorOpts, opts...) }
}

// WithImageDescriber sets what turns images into text in collections with image
// descriptions enabled: a vision model, or OCR (images.NewOCR). Without this option the
// service uses OCR when tesseract is installed; WithImageDescriber(nil) turns descriptions off.
func WithImageDescriber(d images.Describer) Option {
	return func(s *Service) { s.describer, s.describerSet = d, true }
}

// New builds a Service on db. The schema must be migrated (Migrate).
func New(db *bun.DB, opts ...Option) (*Service, error) {
	s := &Service{db: db, log: slog.Default(), lastUsed: map[uuid.UUID]time.Time{}, maxUpload: DefaultMaxUploadBytes}
	for _, o := range opts {
		o(s)
	}
	if s.batchOpts != nil && s.embedders != nil {
		// Search embeds one query text: it must not wait for a batch to fill.
		s.embedders = embedbatch.New(s.embedders, append([]embedbatch.Option{embedbatch.WithDirectBelow(2)}, s.batchOpts...)...)
	}
	s.queue = queue.New(db, append([]queue.Option{queue.WithLogger(s.log)}, s.queueOpts...)...)
	s.vectors = vectorstore.New(db, s.vectorOpts...)
	if s.extractor == nil {
		s.extractor = extract.New()
	}
	if !s.describerSet {
		// OCR is the offline default, so scanned PDFs become searchable on a fresh machine.
		if ocr, err := images.NewOCR(); err == nil {
			s.describer = ocr
		}
	}
	s.imageFinder = images.NewCollector()
	box, err := secret.NewBox(s.secretKey)
	if err != nil {
		return nil, err
	}
	if s.secretKey != "" {
		s.box = box
	}
	s.holder = holderID()
	return s, nil
}

// RunIndexMerge moves the chunks that indexing wrote into collections' delta tables into their
// HNSW indexes, until ctx ends. Chunks are searchable before (Search ranks the delta exactly); the
// merge keeps the delta small. Run it in every process that runs workers (docindex serve and
// docindex worker do); several processes may run it at once.
//
// The merge yields to this process's jobs: while any runs, it merges only collections whose delta
// passed half its bound (vectorstore.WithYield), and it starts when the last job ends.
func (s *Service) RunIndexMerge(ctx context.Context) {
	s.vectors.Run(ctx,
		vectorstore.WithYield(func() bool { return s.running.Load() > 0 }),
		vectorstore.WithErrorHandler(func(err error) {
			s.log.WarnContext(ctx, "merge chunks into the vector index", "err", err)
		}))
}

// Queue returns the job queue, for running workers (worker.New(svc.Queue(), svc): the Service is the handler).
func (s *Service) Queue() *queue.Queue { return s.queue }

// MaxUploadBytes is the size limit of one uploaded file.
func (s *Service) MaxUploadBytes() int64 { return s.maxUpload }

// DB returns the database the service works on.
func (s *Service) DB() *bun.DB { return s.db }

// Ping reports whether the database answers.
func (s *Service) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// inTx runs fn in a transaction, rolled back when fn fails.
func (s *Service) inTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return s.db.RunInTx(ctx, nil, fn)
}
