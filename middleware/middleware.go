package middleware

import (
	"fmt"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// Rule is one limit of a middleware: a limiter.Rule (its Name, Algorithm,
// Blockable, Penalty, Lease and Shadow), embedded, and the functions of a
// request that apply it (Identity, AltIdentity, Optional, Plan, Cost, Skip,
// Settle); see guard.Rule. Key functions are those of package keyfunc,
// or any of httprate's shape.
//
// A shadow rule's would-be refusals are reported to the hook (RuleOutcome
// "would_deny") and logged, at most one line per rule a minute; it is left
// out of the rate-limit headers unless the headers.Names given to
// WithHeaders have Shadow set, and out of the 429 body. Settle is given
// the response's status (500 when the handler panicked) and the body
// bytes written.
type Rule = guard.Rule[*http.Request]

// New returns a middleware that decides rules as one stacked decision per
// request, on Redis with every default: NewWithLimiter on a limiter.New of
// guard.Limits(rules) on a redisstore.New(rdb). rdb may be any
// redis.Scripter: *redis.Client, *redis.ClusterClient, *redis.Ring, a
// failover client or an AutoPipeliner. Invalid rules or options are an
// error (wrapping ratelimit.ErrConfig) naming the rule.
//
// New's limiter is never closed: with a leased rule (Rule.Lease), its
// sweeper goroutine runs for the life of the process, and the units its
// pools hold at shutdown come back only as the rule's state recovers. To
// give them back at once, build the limiter yourself and close it once
// the server has stopped serving (see docs/leases.md):
//
//	lim, err := limiter.New(store, guard.Limits(rules))
//	limit, err := middleware.NewWithLimiter(lim, rules)
//	...
//	err = srv.Shutdown(ctx) // no request is being decided or settled
//	err = lim.Close()       // the unspent units are refunded
func New(rdb redis.Scripter, rules []Rule, opts ...Option) (func(http.Handler) http.Handler, error) {
	store, err := redisstore.New(rdb)
	if err != nil {
		return nil, err
	}
	lim, err := limiter.New(store, guard.Limits(rules))
	if err != nil {
		return nil, err
	}
	return NewWithLimiter(lim, rules, opts...)
}

// NewWithLimiter is New on a limiter of your own: on another store (the
// in-process memstore, a Redis store with its options), or with limiter
// options (a key prefix, a fallback store, the deny cache). lim must have
// every rule of rules, as guard.Limits(rules) gives them:
//
//	lim, err := limiter.New(store, guard.Limits(rules), limiter.WithPrefix("api"))
//	...
//	limit, err := middleware.NewWithLimiter(lim, rules)
func NewWithLimiter(lim *limiter.Limiter, rules []Rule, opts ...Option) (func(http.Handler) http.Handler, error) {
	cfg := defaults()
	if err := options.Apply(&cfg, opts); err != nil {
		return nil, err
	}
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", ratelimit.ErrConfig)
	}
	g, err := guard.New(lim, rules, cfg.guard)
	if err != nil {
		return nil, err
	}
	m := &mw{cfg: cfg, g: g}
	for _, r := range rules {
		m.recordEnd = m.recordEnd || r.Settle != nil
	}
	return m.wrap, nil
}

type mw struct {
	cfg config
	g   *guard.Guard[*http.Request]
	// recordEnd is set when a rule settles by the response (Rule.Settle),
	// which a recorder then notes.
	recordEnd bool
}

func (m *mw) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, next)
	})
}

// serve limits one request: the layer decides it, and serve renders the
// result, as headers and the handler, or a refusal.
func (m *mw) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	res := m.g.Decide(r.Context(), r)
	if len(res.Decision.Results) > 0 {
		m.cfg.headers.Write(w.Header(), res.Decision)
	}
	switch res.Outcome {
	case guard.Admitted:
		if res.Shadow && m.cfg.headers.RetryAfter != "" {
			w.Header().Del(m.cfg.headers.RetryAfter) // the request goes through
		}
		m.admit(w, r, next, &res)
	case guard.Refused:
		m.cfg.deny(w, r, res.Decision)
	default:
		m.refuse(w, r, &res)
	}
}

// admit serves an admitted request and settles it once the handler has
// returned (also when it panics).
func (m *mw) admit(w http.ResponseWriter, r *http.Request, next http.Handler, res *guard.Result) {
	if !m.recordEnd {
		defer m.g.Finish(r.Context(), r, res, guard.End{})
		next.ServeHTTP(w, r)
		return
	}
	rec := &recorder{ResponseWriter: w}
	returned := false
	defer func() {
		switch {
		case !returned:
			rec.status = http.StatusInternalServerError // the handler panicked
		case rec.status == 0:
			rec.status = http.StatusOK // the handler wrote nothing
		}
		m.g.Finish(r.Context(), r, res, guard.End{Status: rec.status, Written: rec.written})
	}()
	next.ServeHTTP(rec, r)
	returned = true
}

// refuse answers a request the layer did not decide: the client's
// mistakes (no identity, a bad cost), the server's (a misconfiguration),
// a backend failure under a closed policy, a client gone. It is kept out
// of serve, whose frame is under every handler's stack.
//
//go:noinline
func (m *mw) refuse(w http.ResponseWriter, r *http.Request, res *guard.Result) {
	switch res.Outcome {
	case guard.NoIdentity:
		noIdentity(w, r, m.cfg.keyStatus, res.Rule, res.Err)
	case guard.BadCost:
		http.Error(w, http.StatusText(http.StatusBadRequest), http.StatusBadRequest)
	case guard.Misconfigured:
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	case guard.Canceled:
		// Nobody reads it: 503, as for a client that gives up its turn.
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
	default: // guard.Failed
		if name := m.cfg.headers.RetryAfter; name != "" {
			w.Header().Set(name, "1")
		}
		unavailable(w, r)
	}
}
