package limiter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

// Rule is a named limit. Name appears in keys and headers: 1 to 64 bytes of
// [A-Za-z0-9._-], unique within a Limiter.
type Rule struct {
	Name      string
	Algorithm algorithms.Algorithm
	// Blockable makes the rule honour blocks (see Limiter.Block): each of
	// its decisions reads one more key, in the same script run. Rules
	// without it and without a Penalty cost nothing extra.
	Blockable bool
	// Penalty, when positive, blocks a client for that long each time the
	// rule's algorithm denies it (brute-force protection); it implies
	// Blockable. At most 10 years.
	Penalty time.Duration
}

// Check asks one rule, by name, about one identity.
type Check struct {
	// Rule is the name of the rule.
	Rule string
	// Identity is who is limited: an IP, a user ID, a route. It must not
	// be empty; any other bytes are safe (see the package doc).
	Identity string
	// Cost is the request's weight: 0 peeks without consuming.
	Cost int
	// Algorithm, when set, replaces the rule's algorithm for this check:
	// the limit of a customer's plan, say. It is validated on first use
	// (an invalid one is an ErrCheck naming the rule) and remembered by
	// value. See "Limits per request" in the package doc for what happens
	// to a client's state when its limit changes.
	Algorithm algorithms.Algorithm
}

// Limiter decides stacks of rules against a Store. It is safe for
// concurrent use.
type Limiter struct {
	store   Store
	breaker *breaker   // nil for in-process stores
	denied  *denyCache // nil when off
	rules   map[string]*rule
	algos   sync.Map // algorithms.Algorithm -> *algo, for per-check algorithms
	cfg     config
}

type rule struct {
	name      string
	algo      *algo
	blockable bool
	penalty   time.Duration
}

// algo is a validated algorithm and what the limiter derives from it once.
type algo struct {
	alg       algorithms.Algorithm
	suffix    string // ends its keys
	signature string // its parameters, for the deny cache
	policy    algorithms.Policy
	err       error // invalid: the reason
}

func newAlgo(alg algorithms.Algorithm) *algo {
	p, err := script.Encode(alg)
	if err != nil {
		return &algo{err: unprefixed(err)}
	}
	return &algo{alg: alg, suffix: p.KeySuffix, signature: p.Signature, policy: algorithms.PolicyOf(alg)}
}

// algoOf is a per-check algorithm, validated once per value.
func (l *Limiter) algoOf(alg algorithms.Algorithm) *algo {
	if a, ok := l.algos.Load(alg); ok {
		return a.(*algo)
	}
	a, _ := l.algos.LoadOrStore(alg, newAlgo(alg))
	return a.(*algo)
}

// New returns a Limiter on Redis: NewWithStore on NewRedisStore(rdb), each
// given its options. It validates the rules and options and does not touch
// Redis: the script is loaded on first use, so a limiter starts while Redis
// is down. rdb may be a *redis.Client, *redis.ClusterClient, *redis.Ring,
// a failover client or an AutoPipeliner.
func New(rdb redis.Scripter, rules []Rule, opts ...Option) (*Limiter, error) {
	storeOpts, limiterOpts := split(opts)
	store, err := NewRedisStore(rdb, storeOpts...)
	if err != nil {
		return nil, err
	}
	return NewWithStore(store, rules, limiterOpts...)
}

// NewWithStore returns a Limiter on any Store, such as a RedisStore or the
// in-process memstore.
func NewWithStore(store Store, rules []Rule, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ratelimit.ErrConfig)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ratelimit.ErrConfig)
	}
	l := &Limiter{store: store, cfg: defaults(), rules: make(map[string]*rule, len(rules))}
	if err := l.cfg.apply(opts, false); err != nil {
		return nil, err
	}
	_, redis := store.(*RedisStore)
	if (redis || l.cfg.denySet) && l.cfg.denyCache > 0 {
		l.denied = newDenyCache(l.cfg.denyCache, l.cfg.denyAge)
	}
	if redis || l.cfg.fallback != nil {
		l.breaker = &breaker{store: store, fallback: l.cfg.fallback, retry: l.cfg.retry}
		if rs, ok := store.(*RedisStore); ok {
			l.breaker.span = rs.timeout
		}
	}
	for i, r := range rules {
		if !validRuleName(r.Name) {
			return nil, fmt.Errorf("%w: rule %d: name %q must be 1 to 64 bytes of [A-Za-z0-9._-]", ratelimit.ErrConfig, i, r.Name)
		}
		if l.rules[r.Name] != nil {
			return nil, fmt.Errorf("%w: rule %q: duplicate name", ratelimit.ErrConfig, r.Name)
		}
		a := newAlgo(r.Algorithm)
		if a.err != nil {
			return nil, fmt.Errorf("%w: rule %q: %w", ratelimit.ErrConfig, r.Name, a.err)
		}
		if r.Penalty < 0 || r.Penalty > exact.MaxSpan {
			return nil, fmt.Errorf("%w: rule %q: penalty %v outside 0 to %v", ratelimit.ErrConfig, r.Name, r.Penalty, exact.MaxSpan)
		}
		l.rules[r.Name] = &rule{name: r.Name, algo: a, blockable: r.Blockable || r.Penalty > 0, penalty: r.Penalty}
	}
	if err := declare(l); err != nil {
		return nil, err
	}
	return l, nil
}

// Allow decides a request of cost 1 against one rule.
func (l *Limiter) Allow(ctx context.Context, rule, identity string) (Decision, error) {
	return l.Decide(ctx, Check{Rule: rule, Identity: identity, Cost: 1})
}

// Decide runs the checks as one all-or-nothing decision in one store call
// (one script run on Redis). Being limited is not an error: err is non-nil
// for an invalid check (ErrCheck) or a store failure (ErrBackend). A ctx
// that is already done decides nothing, on every store: Decide returns
// ctx's error, not an ErrBackend.
//
// Once failures show that Redis is down (3 round trips in a row that
// failed, a failed dial counting at once, timeouts and connections lost in
// use only once they have gone on for the store's timeout), Redis is
// marked down for the retry interval (see WithRetryInterval): decisions
// then fail at once with ErrUnavailable instead of waiting for the
// timeout. With WithFallback they go to the
// fallback store instead, and a Redis failure is returned together with
// the fallback's valid decision (Decision.Fallback set), so it can be
// reported: act on d when d.Fallback is true, whatever err says.
func (l *Limiter) Decide(ctx context.Context, checks ...Check) (Decision, error) {
	if len(checks) == 0 {
		return Decision{Allowed: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	var buf [4]checked
	sc, rules, err := l.prepare(checks, buf[:0])
	if err != nil {
		return Decision{}, err
	}
	return l.decideChecks(ctx, sc, rules)
}

// decideChecks decides prepared checks: through the deny cache, then the
// store (by way of the breaker); it names the results after their rules.
func (l *Limiter) decideChecks(ctx context.Context, sc []StoreCheck, rules []checked) (Decision, error) {
	now, err := l.now()
	if err != nil {
		return Decision{}, err
	}
	// A stack that Redis denied is denied again locally until its wait is
	// over (see WithDenyCache).
	var sig stackID
	var sent time.Time
	var epoch uint64
	cacheable := false
	if l.denied != nil {
		if sig, cacheable = l.denied.signature(sc); cacheable {
			epoch = forgotten.Load()
			if sent = now; sent.IsZero() {
				sent = time.Now()
			}
			if d, ok := l.denied.get(sig, sent); ok {
				return d, nil
			}
		}
	}
	d, err := l.decide(ctx, now, sc)
	if err != nil {
		err = backendError(err)
		if !d.Fallback {
			return Decision{}, err
		}
	}
	for i, r := range rules {
		res := &d.Results[i]
		res.Rule, res.Policy, res.Limit, res.check = r.rule.name, r.algo.policy, r.algo.policy.Quota, sc[i]
	}
	if cacheable && !d.Allowed && !d.Fallback {
		l.denied.put(sig, sent, epoch, d)
	}
	return d, err
}

// checked is a check's rule and the algorithm it is decided with.
type checked struct {
	rule *rule
	algo *algo
}

// prepare validates checks and builds their store checks.
func (l *Limiter) prepare(checks []Check, out []checked) ([]StoreCheck, []checked, error) {
	sc := make([]StoreCheck, len(checks))
	for i, c := range checks {
		r := l.rules[c.Rule]
		if r == nil {
			return nil, nil, fmt.Errorf("%w: no rule %q", ErrCheck, c.Rule)
		}
		a := r.algo
		if c.Algorithm != nil {
			if a = l.algoOf(c.Algorithm); a.err != nil {
				return nil, nil, fmt.Errorf("%w: rule %q: %w", ErrCheck, r.name, a.err)
			}
		}
		if c.Identity == "" {
			return nil, nil, fmt.Errorf("%w: rule %q: empty identity", ErrCheck, r.name)
		}
		if c.Cost < 0 {
			return nil, nil, fmt.Errorf("%w: rule %q: negative cost %d", ErrCheck, r.name, c.Cost)
		}
		sc[i] = StoreCheck{Key: r.key(l.cfg.prefix, c.Identity, a.suffix), Algorithm: a.alg, Cost: c.Cost, signature: a.signature}
		if r.blockable {
			sc[i].Blocks, sc[i].Penalty = r.key(l.cfg.prefix, c.Identity, blockSuffix), r.penalty
		}
		for j := range i {
			if sc[j].Key == sc[i].Key {
				return nil, nil, fmt.Errorf("%w: rule %q: identity checked twice", ErrCheck, r.name)
			}
		}
		out = append(out, checked{r, a})
	}
	return sc, out, nil
}

// now is the passed-in clock's time, or zero for the store's own clock.
func (l *Limiter) now() (time.Time, error) {
	if l.cfg.clock == nil {
		return time.Time{}, nil
	}
	now := l.cfg.clock()
	if now.Before(time.Unix(0, 0)) || now.After(exact.MaxTime) {
		return time.Time{}, fmt.Errorf("%w: clock time %v outside 1970 to %v", ErrCheck, now, exact.MaxTime)
	}
	return now, nil
}

// decide asks the store through its breaker.
func (l *Limiter) decide(ctx context.Context, now time.Time, sc []StoreCheck) (Decision, error) {
	if l.breaker != nil {
		return l.breaker.decide(ctx, now, sc)
	}
	return l.store.Decide(ctx, now, sc)
}

// backendError wraps a store failure in ErrBackend, and network timeouts in
// context.DeadlineExceeded too, so callers test for one thing.
func backendError(err error) error {
	if isTimeout(err) && !errors.Is(err, context.DeadlineExceeded) { // a network timeout
		return fmt.Errorf("%w: %w: %w", ErrBackend, context.DeadlineExceeded, unprefixed(err))
	}
	return fmt.Errorf("%w: %w", ErrBackend, unprefixed(err))
}
