package middleware

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// errBadCost is reported (to the error handler) when a rule's Cost returns
// a negative number; the request is answered 400 Bad Request.
var errBadCost = errors.New("ratelimit: negative request cost")

// Rule is one limit of a middleware.
type Rule struct {
	// Name identifies the rule in keys, headers and problem bodies: 1 to 64
	// bytes of [A-Za-z0-9._-], unique within the middleware.
	Name string
	// Key extracts the identity the rule limits (keyfunc.IP(), ...).
	Key keyfunc.KeyFunc
	// Algorithm is the limit.
	Algorithm algorithms.Algorithm
	// Plan, when set, chooses the limit per request (a customer's plan,
	// looked up from the API key, say); a nil result means Algorithm. An
	// invalid one is a server error (500, reported to the error handler).
	// Headers and RateLimit-Policy report the limit that applied. See the
	// limiter package for what happens to a client's state when its limit
	// changes.
	Plan func(*http.Request) algorithms.Algorithm
	// Cost is the request's weight for this rule; nil means 1. 0 checks
	// without consuming; negative answers 400.
	Cost func(*http.Request) int
	// Skip, when it returns true, leaves the rule out for that request.
	Skip func(*http.Request) bool
	// AltKey supplies the identity when Key finds none (an API key rule
	// that counts requests without a key by client IP, say).
	AltKey keyfunc.KeyFunc
	// Optional makes a request for which Key and AltKey find no identity
	// sit this rule out. By default such a request is rejected with the key
	// error status (401, see WithKeyErrorStatus).
	Optional bool
	// Settle, when set, is the request's final cost once the response is
	// known (its status, and the body bytes written): the difference from
	// Cost is given back or charged after the handler returns (see
	// limiter.Limiter.Settle). A login rule that counts only failures:
	// Settle returns 1 for a 401 and 0 otherwise. Negative means 0.
	Settle func(r *http.Request, status int, written int64) int
	// Blockable makes the rule honour blocks set with limiter.Limiter.Block
	// (see limiter.Rule); Penalty blocks a client for that long each time
	// the rule denies it.
	Blockable bool
	Penalty   time.Duration
	// Lease makes the rule leased (see limiter.Rule): each instance takes
	// the rule's units from Redis in batches and spends them without a
	// round trip, for a global or per-tenant rule every request checks.
	// The batches left when the process stops come back as the rule's
	// state recovers (a window's end, a bucket's refill); to give them
	// back at once, build the limiter (NewWithLimiter) and Close it (see
	// New).
	Lease time.Duration
	// Shadow decides and counts the rule but never lets it refuse a
	// request (see limiter.Rule): to roll a limit out, watch its would-be
	// refusals first. Each is reported to the hook (RuleOutcome
	// "would_deny") and logged, at most one line per rule a minute. A
	// shadow rule is left out of the rate-limit headers unless the
	// headers.Names given to WithHeaders have Shadow set, and out of the
	// 429 body. Not with Lease. WithShadowMode, in contrast, lets every
	// rule's refusals through.
	Shadow bool
}

// Event describes one decision or failure, for metrics.
type Event struct {
	Request *http.Request
	// Decision is the outcome, one result per rule that took part (rules
	// skipped for this request are absent); each result names its rule.
	Decision limiter.Decision
	// KeyHashes[i] is a short hash (FNV-1a 64, hex) of the identity of
	// Decision.Results[i]: stable, and not the identity itself.
	KeyHashes []string
	// Shadow is true when shadow mode let a denied request through.
	Shadow bool
	// Err is the failure, if any: a key function's, or Redis's (wrapping
	// limiter.ErrBackend). Decision is then empty, unless the fallback store
	// decided (Decision.Fallback). It is context.Canceled, and no
	// ErrBackend, when the request's client went away before its decision
	// was made: not a failure of Redis.
	Err error
	// Rules names the rules the request was checked against (or, for a
	// key function's failure, the rule whose key failed), also when
	// Decision is empty.
	Rules []string
	// Duration is how long the decision took (0 for a key function's
	// failure, which is not decided).
	Duration time.Duration
	// Outcome names what happened to the request, for metrics: "allowed",
	// "denied", "cached_denied" (the deny cache answered),
	// "shadow_allowed" (WithShadowMode let a denied request through),
	// "fallback_allowed" and "fallback_denied" (the
	// fallback store decided), "error" (Redis failed, or a Plan was
	// invalid; the failure policy applied), "no_identity" (a key function
	// found none, or a Cost was negative), "canceled" (the client went
	// away before its decision). RuleOutcome says it per rule, names
	// the rules the decision did not ask "undecided", and a shadow rule's
	// would-be refusal "would_deny" (Outcome leaves shadow rules out).
	Outcome string
	// Cause classifies Err when Redis failed (whether or not the fallback
	// decided): "unavailable" (skipped while Redis is marked down),
	// "timeout", "reply" (Redis answered an error), "network", "other";
	// "" otherwise.
	Cause string
	// Backend is the state of Redis the event shows: "up", "down",
	// "fallback" (the fallback store decided), or "" when it shows none (a
	// denial from the deny cache, a request without an identity, a client
	// gone).
	Backend string
}

// New returns a middleware that decides rules as one stacked decision per
// request, on Redis with every default: NewWithLimiter on a limiter.New of
// LimiterRules(rules) on a redisstore.New(rdb). rdb may be any
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
//	lim, err := limiter.New(store, middleware.LimiterRules(rules))
//	limit, err := middleware.NewWithLimiter(lim, rules)
//	...
//	err = srv.Shutdown(ctx) // no request is being decided or settled
//	err = lim.Close()       // the unspent units are refunded
func New(rdb redis.Scripter, rules []Rule, opts ...Option) (func(http.Handler) http.Handler, error) {
	store, err := redisstore.New(rdb)
	if err != nil {
		return nil, err
	}
	lim, err := limiter.New(store, LimiterRules(rules))
	if err != nil {
		return nil, err
	}
	return NewWithLimiter(lim, rules, opts...)
}

// NewWithLimiter is New on a limiter of your own: on another store (the
// in-process memstore, a Redis store with its options), or with limiter
// options (a key prefix, a fallback store, the deny cache). lim must have
// every rule of rules, as LimiterRules(rules) gives them:
//
//	lim, err := limiter.New(store, middleware.LimiterRules(rules), limiter.WithPrefix("api"))
//	...
//	limit, err := middleware.NewWithLimiter(lim, rules)
func NewWithLimiter(lim *limiter.Limiter, rules []Rule, opts ...Option) (func(http.Handler) http.Handler, error) {
	if lim == nil {
		return nil, fmt.Errorf("%w: nil limiter", ratelimit.ErrConfig)
	}
	cfg := defaults()
	if err := options.Apply(&cfg, opts); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ratelimit.ErrConfig)
	}
	// Only the middleware's rules are looked up in the limiter's: a limiter
	// may hold many more (config's holds every stack's), and each
	// middleware on it then costs only its own.
	want := LimiterRules(rules)
	have := make(map[string]limiter.Rule, len(want)) // the limiter's, by name; zero: none
	for i, r := range want {
		if rules[i].Key == nil {
			return nil, fmt.Errorf("%w: rule %q: no Key function", ratelimit.ErrConfig, r.Name)
		}
		have[r.Name] = limiter.Rule{}
	}
	for _, r := range lim.Rules() {
		if _, ok := have[r.Name]; ok {
			have[r.Name] = r
		}
	}
	for _, r := range want {
		if have[r.Name] != r {
			return nil, fmt.Errorf("%w: rule %q: the limiter has no such rule (build it with LimiterRules)", ratelimit.ErrConfig, r.Name)
		}
	}
	m := &mw{cfg: cfg, rules: rules, lim: lim, inFlight: make([]bool, len(rules))}
	for i, r := range rules {
		f, _ := algo.FactsOf(r.Algorithm) // valid: the limiter has the rule
		m.inFlight[i] = f.InFlight
		if r.Shadow && m.shadowLog == nil {
			m.shadowLog = newLineLimit(time.Now)
		}
	}
	return m.wrap, nil
}

// LimiterRules returns the limiter's rules behind a middleware of rules:
// a limiter.Limiter built on them, on the same Redis client or store and
// with the same limiter options, acts on exactly the state the middleware
// decides on (NewWithLimiter takes such a limiter). An admin endpoint
// or tool that shares the rules value with the service blocks, resets and
// reports clients (limiter.Limiter.Block, Reset, Status) without
// restating them. The identity of a client under a rule is what the
// rule's Key returns for a request of that client: rules[i].Key(r)
// (keyfunc.Header hashes the raw value, so pass a request carrying it).
func LimiterRules(rules []Rule) []limiter.Rule {
	lrules := make([]limiter.Rule, len(rules))
	for i, r := range rules {
		lrules[i] = limiter.Rule{Name: r.Name, Algorithm: r.Algorithm, Blockable: r.Blockable, Penalty: r.Penalty, Lease: r.Lease, Shadow: r.Shadow}
	}
	return lrules
}

type mw struct {
	cfg   config
	rules []Rule
	lim   *limiter.Limiter
	// inFlight is, per rule, whether its algorithm holds its units in
	// flight (see holdsSlots).
	inFlight []bool
	// shadowLog bounds the log lines of shadow rules' would-be refusals
	// (nil without shadow rules).
	shadowLog *lineLimit
}

func (m *mw) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, next)
	})
}

// serve limits one request in four steps: build its checks, decide them,
// respond (headers, then the handler or the denial), and settle after the
// handler what settles.
func (m *mw) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if m.exempt(r) {
		next.ServeHTTP(w, r)
		return
	}
	var checkBuf [4]limiter.Check
	var ruleBuf [4]int
	checks, rules, failed, status, err := m.checks(r, checkBuf[:0], ruleBuf[:0])
	if err != nil {
		m.unkeyed(w, r, failed, status, err)
		return
	}
	if len(checks) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	var start time.Time
	if m.cfg.hook != nil {
		start = time.Now()
	}
	d, err := m.lim.Decide(r.Context(), checks...)
	if err != nil && !d.Fallback {
		m.undecided(w, r, next, err, checks, start)
		return
	}
	if err != nil {
		m.cfg.onError(r, err) // Redis failed; the fallback decided
	}
	m.respond(w, r, next, d, err, checks, rules, start)
}

// unkeyed answers a request that rule failed could not key with status.
// It is kept out of serve, whose frame is under every decision's and every
// handler's stack (a goroutine whose stack outgrows its start is copied).
//
//go:noinline
func (m *mw) unkeyed(w http.ResponseWriter, r *http.Request, failed, status int, err error) {
	m.reject(w, Event{Request: r, Err: err, Rules: []string{m.rules[failed].Name}}, status)
}

// queued reports whether an allowed d waits for its turn in a Queue rule.
func queued(d limiter.Decision) bool {
	for _, res := range d.Results {
		if res.Delay > 0 && !res.Shadow {
			return true
		}
	}
	return false
}

// exempt reports whether an exemption (WithExempt) takes r out of limiting.
func (m *mw) exempt(r *http.Request) bool {
	for _, exempt := range m.cfg.exempt {
		if exempt(r) {
			return true
		}
	}
	return false
}

// checks appends r's checks to checks and the index of each one's rule to
// rules. A request that cannot be decided gets the error, the index of the
// rule that failed and the status to answer.
func (m *mw) checks(r *http.Request, checks []limiter.Check, rules []int) (_ []limiter.Check, _ []int, failed, status int, err error) {
	for i := range m.rules {
		c, ok, status, err := m.check(i, r)
		if err != nil {
			return nil, nil, i, status, err
		}
		if ok {
			checks = append(checks, c)
			rules = append(rules, i)
		}
	}
	return checks, rules, 0, 0, nil
}

// undecided answers a request whose checks were not decided: an invalid
// Plan (500), a client gone (nobody to serve), or a Redis failure, which
// the failure policy answers.
func (m *mw) undecided(w http.ResponseWriter, r *http.Request, next http.Handler, err error, checks []limiter.Check, start time.Time) {
	switch {
	case errors.Is(err, limiter.ErrCheck): // an invalid Plan
		m.reject(w, Event{Request: r, Err: err, Rules: ruleNames(checks)}, http.StatusInternalServerError)
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away while its request was decided: not a
		// failure of Redis, and nobody to serve. 503, as for a client
		// that gives up its turn in a queue; nobody reads it.
		m.report(Event{Request: r, Err: r.Context().Err(), Rules: ruleNames(checks), Duration: since(start)})
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
	default:
		m.fail(Event{Request: r, Err: err, Rules: ruleNames(checks), Duration: since(start)})
		if !m.cfg.failClosed {
			next.ServeHTTP(w, r)
			return
		}
		if name := m.cfg.headers.RetryAfter; name != "" {
			w.Header().Set(name, "1")
		}
		unavailable(w, r)
	}
}

// respond answers a decided request: it reports the decision, sets the
// headers, holds a queued request until its turn, then serves it (settling
// after the handler what settles) or denies it. err is a Redis failure
// the fallback store decided despite.
func (m *mw) respond(w http.ResponseWriter, r *http.Request, next http.Handler, d limiter.Decision, err error, checks []limiter.Check, rules []int, start time.Time) {
	shadow := !d.Allowed && m.cfg.shadow
	if m.cfg.hook != nil {
		m.report(Event{Request: r, Decision: d, KeyHashes: keyHashes(checks), Shadow: shadow, Err: err,
			Rules: ruleNames(checks), Duration: since(start)})
	}
	if m.shadowLog != nil {
		m.logShadow(r, d)
	}
	shown := m.advertised(d, checks, rules)
	m.cfg.headers.Write(w.Header(), shown)
	if d.Allowed && queued(d) {
		// A queue: hold the request until its turn; a client that leaves
		// first gives its turn back.
		if err := m.lim.Hold(r.Context(), d); err != nil {
			if errors.Is(err, limiter.ErrBackend) {
				m.cfg.onError(r, err)
			}
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			return
		}
	}
	switch {
	case d.Allowed && m.settles(checks, rules):
		m.serveSettled(w, r, next, d, checks, rules)
	case d.Allowed:
		next.ServeHTTP(w, r)
	case shadow:
		if m.cfg.headers.RetryAfter != "" {
			w.Header().Del(m.cfg.headers.RetryAfter) // the request goes through
		}
		next.ServeHTTP(w, r)
	default:
		m.cfg.deny(w, r, shown)
	}
}

// advertised is d as the response tells it: a concurrency limit's waits
// (a refusal's RetryAfter, and NextAfter, the RateLimit field's t) at most
// the configured one (WithConcurrencyRetryAfter). A slot comes back when
// its request ends, which the server cannot know in advance; the oldest
// slot's expiry that the limiter reports is only the latest it can come
// back. A block's wait is kept. d's results are copied before a change:
// the limiter's decision, which Hold and Settle use, is left alone.
func (m *mw) advertised(d limiter.Decision, checks []limiter.Check, rules []int) limiter.Decision {
	copied := false
	for j, i := range rules {
		res := d.Results[j]
		if res.Blocked || !m.holdsSlots(checks[j], i) {
			continue
		}
		retry, next := res.RetryAfter, min(res.NextAfter, m.cfg.slotRetry)
		if !res.Allowed && retry != algorithms.Never {
			retry = min(retry, m.cfg.slotRetry)
		}
		if retry == res.RetryAfter && next == res.NextAfter {
			continue
		}
		if !copied {
			d.Results, copied = slices.Clone(d.Results), true
		}
		d.Results[j].RetryAfter, d.Results[j].NextAfter = retry, next
	}
	return d
}

// holdsSlots reports whether check c of rule i takes slots: its algorithm
// (its Plan's, or the rule's) holds its units in flight, a concurrency
// limit.
func (m *mw) holdsSlots(c limiter.Check, i int) bool {
	if c.Plan == nil {
		return m.inFlight[i]
	}
	f, _ := algo.FactsOf(c.Plan)
	return f.InFlight
}

// check builds rule i's check for r. ok is false when the rule sits this
// request out; err (with the status to answer) when the request must be
// rejected before deciding.
func (m *mw) check(i int, r *http.Request) (c limiter.Check, ok bool, status int, err error) {
	rule := &m.rules[i]
	if rule.Skip != nil && rule.Skip(r) {
		return c, false, 0, nil
	}
	id, err := identity(rule.Key, r)
	if err != nil && rule.AltKey != nil {
		id, err = identity(rule.AltKey, r)
	}
	if err != nil {
		if rule.Optional {
			return c, false, 0, nil
		}
		return c, false, m.cfg.keyStatus, &keyError{rule: rule.Name, err: err}
	}
	cost := 1
	if rule.Cost != nil {
		if cost = rule.Cost(r); cost < 0 {
			return c, false, http.StatusBadRequest, fmt.Errorf("rule %q: %w: %d", rule.Name, errBadCost, cost)
		}
	}
	c = limiter.Check{Rule: rule.Name, Identity: id, Cost: cost}
	if rule.Plan != nil {
		c.Plan = rule.Plan(r)
	}
	return c, true, 0, nil
}

// identity runs fn, turning an empty identity, and any failure of fn's
// own, into keyfunc.ErrNoKey.
func identity(fn keyfunc.KeyFunc, r *http.Request) (string, error) {
	id, err := fn(r)
	switch {
	case err != nil && !errors.Is(err, keyfunc.ErrNoKey):
		err = fmt.Errorf("%w: %w", keyfunc.ErrNoKey, err)
	case err == nil && id == "":
		err = fmt.Errorf("%w: key function returned an empty identity", keyfunc.ErrNoKey)
	}
	return id, err
}

// reject reports a request that cannot be decided and answers it with
// status.
func (m *mw) reject(w http.ResponseWriter, e Event, status int) {
	m.fail(e)
	http.Error(w, http.StatusText(status), status)
}

// fail reports a failure to the error handler and the hook.
func (m *mw) fail(e Event) {
	m.cfg.onError(e.Request, e.Err)
	m.report(e)
}

func ruleNames(checks []limiter.Check) []string {
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = c.Rule
	}
	return names
}

// since is the time since start, 0 for a zero start.
func since(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	return time.Since(start)
}

func keyHashes(checks []limiter.Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		h := fnv.New64a()
		_, _ = h.Write([]byte(c.Identity))
		out[i] = strconv.FormatUint(h.Sum64(), 16)
	}
	return out
}
