package limiter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/lua"
)

// Rule is a named limit. Name appears in keys and headers: 1 to 64 bytes of
// [A-Za-z0-9._-], unique within a Limiter.
type Rule struct {
	Name      string
	Algorithm algorithms.Algorithm
}

// Check asks one rule about one identity.
type Check struct {
	// Rule is the index of the rule in the slice given to New.
	Rule int
	// Identity is who is limited: an IP, a user ID, a route. It must not
	// be empty; any other bytes are safe (see the package doc).
	Identity string
	// Cost is the request's weight: 0 peeks without consuming.
	Cost int
}

// Limiter decides stacks of rules against a Store. It is safe for
// concurrent use.
type Limiter struct {
	store    Store
	failover *failover  // nil without WithFallback
	denied   *denyCache // nil when off or the store is local
	rules    []rule
	cfg      config
}

type rule struct {
	name   string
	code   string
	alg    algorithms.Algorithm
	policy algorithms.Policy
}

// New returns a Limiter on Redis (see RedisStore). It validates the rules
// and options and does not touch Redis: the script is loaded on first use,
// so a limiter starts while Redis is down. rdb may be a *redis.Client,
// *redis.ClusterClient, *redis.Ring, a failover client or an AutoPipeliner.
// A *redis.Client is used through rdb.WithTimeout(timeout), which shares
// its connection pool, so the timeout bounds every socket read and write.
func New(rdb redis.Scripter, rules []Rule, opts ...Option) (*Limiter, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: nil Redis client", ErrConfig)
	}
	store := RedisStore(rdb).(*redisStore)
	l, err := NewWithStore(store, rules, opts...)
	if err != nil {
		return nil, err
	}
	store.boundIO(l.cfg.timeout)
	return l, nil
}

// NewWithStore returns a Limiter on any Store, such as the in-process
// memstore.
func NewWithStore(store Store, rules []Rule, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrConfig)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ErrConfig)
	}
	l := &Limiter{store: store, cfg: config{prefix: DefaultPrefix, timeout: DefaultTimeout, denyCache: DefaultDenyCacheSize}}
	for _, opt := range opts {
		if err := opt(&l.cfg); err != nil {
			return nil, err
		}
	}
	if _, local := store.(Local); !local && l.cfg.denyCache > 0 {
		l.denied = newDenyCache(l.cfg.denyCache)
	}
	if l.cfg.fallback != nil {
		l.failover = &failover{primary: store, fallback: l.cfg.fallback, retry: l.cfg.retry}
	}
	seen := make(map[string]bool, len(rules))
	for i, r := range rules {
		if !validRuleName(r.Name) {
			return nil, fmt.Errorf("%w: rule %d: name %q must be 1 to 64 bytes of [A-Za-z0-9._-]", ErrConfig, i, r.Name)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("%w: rule %q: duplicate name", ErrConfig, r.Name)
		}
		seen[r.Name] = true
		p, err := lua.ParamsOf(r.Algorithm)
		if err != nil {
			return nil, fmt.Errorf("%w: rule %q: %w", ErrConfig, r.Name, err)
		}
		l.rules = append(l.rules, rule{name: r.Name, code: p.Code(), alg: r.Algorithm, policy: r.Algorithm.Policy()})
	}
	return l, nil
}

// Rules returns the names of the rules, in order.
func (l *Limiter) Rules() []string {
	names := make([]string, len(l.rules))
	for i, r := range l.rules {
		names[i] = r.name
	}
	return names
}

// Allow decides a request of cost 1 against every rule, identities[i] being
// the identity for rule i.
func (l *Limiter) Allow(ctx context.Context, identities ...string) (Decision, error) {
	if len(identities) != len(l.rules) {
		return Decision{}, fmt.Errorf("%w: %d identities for %d rules", ErrCheck, len(identities), len(l.rules))
	}
	checks := make([]Check, len(identities))
	for i, id := range identities {
		checks[i] = Check{Rule: i, Identity: id, Cost: 1}
	}
	return l.Decide(ctx, checks)
}

// Decide runs the checks as one all-or-nothing decision in one store call
// (one script run on Redis). Being limited is not an error: err is non-nil
// only for an invalid check (ErrCheck) or a store failure (ErrBackend).
func (l *Limiter) Decide(ctx context.Context, checks []Check) (Decision, error) {
	if len(checks) == 0 {
		return Decision{Allowed: true}, nil
	}
	sc, results, err := l.prepare(checks)
	if err != nil {
		return Decision{}, err
	}
	now, err := l.now()
	if err != nil {
		return Decision{}, err
	}
	// A stack that Redis denied is denied again locally until its wait is
	// over (see WithDenyCache).
	var sig stackID
	var sent time.Time
	cacheable := false
	if l.denied != nil {
		if sig, cacheable = l.denied.signature(sc); cacheable {
			if sent = now; sent.IsZero() {
				sent = time.Now()
			}
			if d, ok := l.denied.get(sig, sent); ok {
				return d, nil
			}
		}
	}
	d, err := l.decide(ctx, now, sc, results)
	if err != nil {
		return Decision{}, backendError(err)
	}
	if cacheable && !d.Allowed && !d.Fallback {
		l.denied.put(sig, sent, d)
	}
	return d, nil
}

// prepare validates checks and builds their store checks and the results
// to fill.
func (l *Limiter) prepare(checks []Check) ([]StoreCheck, []RuleResult, error) {
	sc := make([]StoreCheck, len(checks))
	results := make([]RuleResult, len(checks))
	for i, c := range checks {
		if c.Rule < 0 || c.Rule >= len(l.rules) {
			return nil, nil, fmt.Errorf("%w: no rule %d", ErrCheck, c.Rule)
		}
		r := &l.rules[c.Rule]
		if c.Identity == "" {
			return nil, nil, fmt.Errorf("%w: rule %q: empty identity", ErrCheck, r.name)
		}
		if c.Cost < 0 {
			return nil, nil, fmt.Errorf("%w: rule %q: negative cost %d", ErrCheck, r.name, c.Cost)
		}
		sc[i] = StoreCheck{Key: r.key(l.cfg.prefix, c.Identity), Algorithm: r.alg, Cost: c.Cost}
		for j := range i {
			if sc[j].Key == sc[i].Key {
				return nil, nil, fmt.Errorf("%w: rule %q: identity checked twice", ErrCheck, r.name)
			}
		}
		results[i] = RuleResult{Rule: r.name, Policy: r.policy}
		results[i].Limit = r.policy.Quota
	}
	return sc, results, nil
}

// now is the passed-in clock's time, or zero for the store's own clock.
func (l *Limiter) now() (time.Time, error) {
	if l.cfg.clock == nil {
		return time.Time{}, nil
	}
	now := l.cfg.clock()
	if now.Before(time.Unix(0, 0)) || now.After(algorithms.MaxTime) {
		return time.Time{}, fmt.Errorf("%w: clock time %v outside 1970 to %v", ErrCheck, now, algorithms.MaxTime)
	}
	return now, nil
}

// decide asks the store (or the failover pair) within the timeout and
// fills results.
func (l *Limiter) decide(ctx context.Context, now time.Time, sc []StoreCheck, results []RuleResult) (Decision, error) {
	if _, local := l.store.(Local); !local {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.cfg.timeout)
		defer cancel()
	}
	plain := make([]algorithms.Result, len(results))
	for i := range results {
		plain[i] = results[i].Result
	}
	var d Decision
	var err error
	if l.failover != nil {
		d, err = l.failover.decide(ctx, now, sc, plain)
	} else {
		d.Allowed, err = l.store.Decide(ctx, now, sc, plain)
	}
	if err != nil {
		return Decision{}, err
	}
	for i := range results {
		results[i].Result = plain[i]
	}
	d.Results = results
	return d, nil
}

// backendError wraps a store failure in ErrBackend, and network timeouts in
// context.DeadlineExceeded too, so callers test for one thing.
func backendError(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w: %w", ErrBackend, context.DeadlineExceeded, err)
	}
	return fmt.Errorf("%w: %w", ErrBackend, err)
}
