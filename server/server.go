package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/kiln-ai/kiln/engine"
	"github.com/kiln-ai/kiln/engine/chat"
	"github.com/kiln-ai/kiln/engine/grammar"
	"github.com/kiln-ai/kiln/engine/llama"
	"github.com/kiln-ai/kiln/engine/lora"
	"github.com/kiln-ai/kiln/engine/tokenizer"
	"github.com/kiln-ai/kiln/engine/toolcall"
	"github.com/kiln-ai/kiln/engine/train"
	"github.com/kiln-ai/kiln/internal/timing"
	"github.com/kiln-ai/kiln/server/responses"
	"github.com/kiln-ai/kiln/telemetry"
)

// Deps are the collaborators the server is built with. Model, Engine and
// Telemetry are required; Clock defaults to the real clock and must be the
// engine's clock (every instant of a request comes from one clock); Logger
// defaults to the telemetry's logger.
type Deps struct {
	Model     *llama.Loaded
	Engine    *engine.Engine
	Telemetry *telemetry.Telemetry
	Clock     engine.Clock
	Logger    *zerolog.Logger
	// Training, when set, runs the training jobs of POST /v1/train/sft:
	// built by cmd over the Engine, the one kernels.Pool and the Adapters
	// registry (train.RunnerConfig). Without it a job is refused.
	Training *train.Runner
	// Adapters, when set, is the adapter registry the Training runner
	// writes to; nil builds one over Config.AdapterDir.
	Adapters *lora.Registry

	// gen replaces Engine in tests that need a scripted generator.
	gen generator
}

// generator is what the server needs of the batching engine.
type generator interface {
	Submit(ctx context.Context, r engine.Request) (generation, error)
	Snapshot() timing.EngineSnapshot
	Ready() bool
}

// generation is one submitted request's token stream.
type generation interface {
	Tokens() <-chan engine.Token
	Result() engine.Result
}

// engineGenerator adapts *engine.Engine to generator.
type engineGenerator struct{ e *engine.Engine }

func (g engineGenerator) Submit(ctx context.Context, r engine.Request) (generation, error) {
	s, err := g.e.Submit(ctx, r)
	if err != nil {
		return nil, err
	}
	return s, nil
}
func (g engineGenerator) Snapshot() timing.EngineSnapshot { return g.e.Snapshot() }
func (g engineGenerator) Ready() bool                     { return g.e.Ready() }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Server is Kiln's HTTP surface. Build it with New; either mount Handler in
// an http.Server of your own, or let Start and Shutdown run one.
type Server struct {
	cfg       Config
	model     *llama.Loaded
	modelID   string
	tok       *tokenizer.Tokenizer
	tmpl      *chat.Template
	family    toolcall.Family // how the model writes tool calls, from its template
	grammars  *grammar.Cache  // compiled grammars of schemas and tools (constraint.go)
	vocab     *grammar.Vocab  // the vocabulary as grammars read it, built once
	vocabOnce sync.Once
	stopIDs   []int
	gen       generator
	tel       *telemetry.Telemetry
	clock     engine.Clock
	log       zerolog.Logger
	recent    *recentRing
	stored    *responses.Store // the Responses API's kept responses (server/responses)
	streams   chan struct{}    // the max-streams semaphore; nil when unlimited
	inflight  byteBudget       // request-body bytes held (body.go)
	// writeTimeout bounds every write of a response (the engine's
	// eviction grace): a client that stops reading frees its handler,
	// and with it its stream slot, once the engine has evicted it.
	writeTimeout    time.Duration
	maxContentBytes int       // message bytes beyond which a prompt cannot fit (size.go)
	created         time.Time // wall-clock start, for uptime and created fields
	handler         http.Handler

	adapters *lora.Registry // --adapter-dir
	training *train.Runner  // training jobs (engine/train)

	stopping atomic.Bool
	outcomes [telemetry.NumOutcomes]atomic.Uint64 // by telemetry.Outcome

	cut     chan struct{} // closed when the shutdown grace ends (drain.go)
	cutOnce sync.Once

	mu        sync.Mutex
	active    int           // requests in flight past the drain gate
	idle      chan struct{} // closed when active drops to 0 while draining
	hs        *http.Server
	ln        net.Listener
	serveDone chan struct{}
	shutdown  bool
}

// New validates cfg and builds the server. It starts nothing.
func New(cfg Config, deps Deps) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("server config: %w", err)
	}
	if deps.Model == nil {
		return nil, errors.New("server: Deps.Model is required")
	}
	if deps.Model.Tokenizer == nil {
		return nil, fmt.Errorf("server: model %q has no tokenizer (a llama2.c checkpoint carries none): serve a GGUF file, which brings its tokenizer and chat template, or kiln-tiny; use kiln generate --prompt-ids for a llama2.c checkpoint", deps.Model.ID)
	}
	if deps.Telemetry == nil {
		return nil, errors.New("server: Deps.Telemetry is required")
	}
	gen := deps.gen
	if gen == nil {
		if deps.Engine == nil {
			return nil, errors.New("server: Deps.Engine is required")
		}
		gen = engineGenerator{deps.Engine}
	}
	if deps.Engine != nil {
		// Report what the engine runs with (GET /v1/config), not the zero
		// defaults of the flags: max_batch and kv_budget follow the backend.
		cfg.Engine = deps.Engine.Config()
		cfg.Engine.KVMaxTokens = deps.Engine.KVMaxTokens()
	}
	s := &Server{
		cfg:      cfg,
		model:    deps.Model,
		modelID:  deps.Model.ID,
		tok:      deps.Model.Tokenizer,
		tmpl:     deps.Model.Template,
		stopIDs:  deps.Model.Tokenizer.StopIDs(),
		grammars: grammar.NewCache(grammarCacheSize),
		gen:      gen,
		tel:      deps.Telemetry,
		clock:    deps.Clock,
		created:  time.Now(),
		recent:   newRecentRing(cfg.RecentRequests),
		stored:   responses.NewStore(time.Now, cfg.ResponseStore),
		cut:      make(chan struct{}),
	}
	if s.tmpl == nil {
		s.tmpl = chat.ChatML()
	}
	s.family = toolcall.Detect(s.tmpl.Source())

	if cfg.ServedModelName != "" {
		s.modelID = cfg.ServedModelName
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if deps.Logger != nil {
		s.log = *deps.Logger
	} else {
		s.log = deps.Telemetry.Logger()
	}
	if cfg.MaxStreams > 0 {
		s.streams = make(chan struct{}, cfg.MaxStreams)
	}
	s.inflight.limit = cfg.MaxInflightBytes
	s.writeTimeout = cmp.Or(cfg.Engine.EvictGrace, engine.DefaultEvictGrace)
	s.maxContentBytes = maxContentBytes(s.tok, deps.Model.Model.Config.SeqLen)
	deps.Telemetry.SetEngineSource(gen.Snapshot)
	if err := deps.Telemetry.SetTrainingSource(s.trainingStats); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.adapters, s.training = deps.Adapters, deps.Training
	if s.training == nil {
		s.training = train.NewRunner(train.RunnerConfig{}) // refuses every job: this server cannot train
	}
	if s.adapters == nil {
		s.adapters = lora.NewRegistry(cfg.AdapterDir, deps.Model.Model, cfg.AdapterCacheBytes)
	}
	deps.Telemetry.SetActiveAdapter(false, baseAdapter)
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's whole HTTP surface (routes.go): each
// route traced by otelhttp with the telemetry's tracer provider (W3C
// traceparent honoured) unless it is a probe, scrape or dashboard read,
// and behind the access-token check unless it is open.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on cfg.Addr and serves in a goroutine that Shutdown stops.
// It returns once the listener is bound.
func (s *Server) Start(_ context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return errStopping
	}
	if s.hs != nil {
		return errors.New("server: already started")
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.hs = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// No ReadTimeout: bodies get Config.BodyTimeout (body.go), and a
		// read deadline left on a streaming request's connection would
		// cancel it when the server's background read expires.
		IdleTimeout: 120 * time.Second,
		// No WriteTimeout: it would cut long streams; every write has
		// its own deadline instead (errors.go, trackingWriter).
	}
	if s.cfg.Loopback() {
		s.log.Info().Str("addr", ln.Addr().String()).Msgf("listening on %s (loopback only)", ln.Addr())
	} else if s.cfg.AccessToken == "" {
		s.log.Warn().Str("addr", ln.Addr().String()).
			Msgf("listening on %s beyond loopback without an access token: the observability endpoints are unauthenticated; set --access-token or KILN_ACCESS_TOKEN", ln.Addr())
	} else {
		s.log.Info().Str("addr", ln.Addr().String()).Msgf("listening on %s (bearer token required)", ln.Addr())
	}
	s.serveDone = make(chan struct{})
	go func(hs *http.Server, ln net.Listener, done chan struct{}) {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("http server stopped")
		}
	}(s.hs, ln, s.serveDone)
	return nil
}

// Addr is the bound address once Start returned, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// StopAdmitting makes new chat requests fail with 503 (Retry-After) while
// in-flight ones continue. Shutdown calls it; it is idempotent.
func (s *Server) StopAdmitting() { s.stopping.Store(true) }

// Shutdown drains (drain.go): it stops admitting, answering new requests
// 503 on the still open listener, lets in-flight requests finish until
// ctx ends, then cuts the remaining ones cleanly and returns ErrDrainCut;
// then it closes the listener and waits for the serving goroutine. It is
// idempotent and safe without Start. It does not stop the engine or the
// telemetry: their owner does, after this returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopTraining()
	idle := s.beginDrain()
	s.mu.Lock()
	s.shutdown = true
	hs, done := s.hs, s.serveDone
	s.mu.Unlock()
	if hs != nil {
		hs.SetKeepAlivesEnabled(false)
	}
	err := s.drain(ctx, idle)
	if hs == nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.Background(), cutBound)
	defer cancel()
	if serr := hs.Shutdown(cctx); serr != nil {
		_ = hs.Close() // connections still busy past the bound are closed
	}
	<-done
	return err
}
