package limiter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	algodesc "github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/memo"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/breaker"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/denycache"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/keypart"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/lease"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/release"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/scratch"
	"github.com/seed-bff0c9e1/ratelimit/limiter/internal/slotid"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Rule is a named limit. Name appears in keys and headers: 1 to 64 bytes of
// [A-Za-z0-9._-], unique within a Limiter. Limiters that name one rule
// under one prefix share its state (see "Keys" in the package doc).
type Rule struct {
	Name      string
	Algorithm algorithms.Algorithm
	// Blockable makes the rule honour blocks (see Limiter.Block): each of
	// its decisions reads one more key, in the same script run. Rules
	// without it and without a Penalty cost nothing extra.
	Blockable bool
	// Penalty, when positive, blocks a client for that long each time the
	// rule's algorithm denies it a positive cost (brute-force protection;
	// a peek, of cost 0, never blocks); it implies Blockable. At most 10
	// years; rounded up to whole microseconds.
	Penalty time.Duration
	// Lease, when positive, makes the rule leased: this Limiter takes the
	// rule's units from the store in batches sized to its demand, spends
	// them without asking the store, and refunds what it did not spend
	// when a batch has lasted Lease (at most a minute; a second or less
	// keeps unspent units few) or on Close. For a global rule checked by
	// every request of many instances. Only for the windows, the buckets
	// and GCRA, and not with Blockable or Penalty; a check under another
	// Plan is decided by the store as an unleased check is. See "Leases"
	// in the package doc for what it bounds and what its results report.
	Lease time.Duration
	// Shadow decides and counts the rule but never lets it refuse: to roll
	// a new limit out, watch its would-be refusals before enforcing it.
	// See "Shadow rules" in the package doc. Not with Lease; a Penalty is
	// not applied while the rule is a shadow rule.
	Shadow bool
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
	// Plan, when set, replaces the rule's algorithm for this check:
	// the limit of a customer's plan, say. It is validated on first use
	// (an invalid one is an ErrCheck naming the rule) and remembered by
	// value, up to 4,096 values; values past those are validated on each
	// use. See "Plans" in the package doc for what happens
	// to a client's state when its limit changes.
	Plan algorithms.Algorithm
}

// Limiter decides stacks of rules against a Store. It is safe for
// concurrent use.
type Limiter struct {
	store   store.Store
	breaker *breaker.Breaker               // nil for in-process stores
	denied  *denycache.Cache[[]RuleResult] // nil when off
	leases  *lease.Pools[store.Check]      // nil without leased rules
	rules   map[string]*rule
	given   []Rule                                    // as New was given them
	algos   memo.Bounded[algorithms.Algorithm, *algo] // plans, validated
	cfg     config
	// releases sends failed slot releases again (see Settle).
	releases release.Queue
}

type rule struct {
	name      string
	algo      *algo
	blockable bool
	penalty   time.Duration
	shadow    bool
	lease     lease.Rule // zero: not leased
}

// algo is a validated algorithm and what the limiter derives from it once.
type algo struct {
	alg    algorithms.Algorithm
	suffix string // ends its keys
	params string // identifies it and its parameters (deny cache, settlement)
	policy algorithms.Policy
	facts  algodesc.Facts // what the limiter asks of it, rather than its type
	lease  lease.Algo     // what lease pools read of it
	hold   time.Duration  // how long a unit held in flight lasts at most (Desc.Hold)
	err    error          // invalid: the reason
}

func newAlgo(alg algorithms.Algorithm) *algo {
	d, err := algodesc.Describe(alg)
	if err != nil {
		return &algo{err: unprefixed(err)}
	}
	p := algorithms.PolicyOf(alg)
	return &algo{alg: alg, suffix: d.KeySuffix, params: d.Params, policy: p, facts: d.Facts, hold: d.Hold,
		lease: lease.Algo{Facts: d.Facts, Refill: d.Refill, Quota: p.Quota, Window: p.Window}}
}

// maxPlans bounds the plans a Limiter keeps validated.
const maxPlans = 4096

// algoOf is a plan, validated once per value for the first 4,096 values
// and on each use past them (see memo.Bounded).
func (l *Limiter) algoOf(alg algorithms.Algorithm) *algo {
	a, _ := l.algos.Get(alg, func(alg algorithms.Algorithm) (*algo, error) { return newAlgo(alg), nil })
	return a
}

// New returns a Limiter that decides rules on store: a Redis store
// (package redisstore), the in-process memstore, or any other Store. It
// validates the rules and options and does not touch the store, so a
// limiter on Redis starts while Redis is down. A Remote store gets a
// breaker (see WithRetryInterval) and a deny cache (see WithDenyCache).
func New(s store.Store, rules []Rule, opts ...Option) (*Limiter, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil store", ratelimit.ErrConfig)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%w: no rules", ratelimit.ErrConfig)
	}
	l := &Limiter{store: s, cfg: defaults(), algos: memo.Bounded[algorithms.Algorithm, *algo]{Max: maxPlans}, rules: make(map[string]*rule, len(rules)), given: slices.Clone(rules)}
	l.releases.Log, l.releases.Describe, l.releases.Send = "rate limit slot releases failed", backendError, l.sendRefunds
	if err := options.Apply(&l.cfg, opts); err != nil {
		return nil, err
	}
	remote, isRemote := s.(store.Remote)
	if (isRemote || l.cfg.denySet) && l.cfg.denyCache > 0 {
		l.denied = denycache.New[[]RuleResult](l.cfg.denyCache, l.cfg.denyAge)
	}
	if isRemote || l.cfg.fallback != nil {
		l.breaker = &breaker.Breaker{Store: s, Fallback: l.cfg.fallback, Retry: l.cfg.retry}
		if isRemote {
			l.breaker.Timeout = remote.Remote()
		}
	}
	for i, r := range rules {
		if !keypart.ValidRuleName(r.Name) {
			return nil, fmt.Errorf("%w: rule %d: name %q must be 1 to 64 bytes of [A-Za-z0-9._-]", ratelimit.ErrConfig, i, r.Name)
		}
		if l.rules[r.Name] != nil {
			return nil, fmt.Errorf("%w: rule %q: duplicate name", ratelimit.ErrConfig, r.Name)
		}
		a, err := r.check()
		if err != nil {
			return nil, err
		}
		l.rules[r.Name] = &rule{name: r.Name, algo: a, blockable: r.Blockable || r.Penalty > 0, penalty: exact.CeilMicros(r.Penalty), shadow: r.Shadow}
		if r.Lease > 0 {
			if l.leases == nil {
				l.leases = lease.New[store.Check](l.cfg.clock)
			}
			l.rules[r.Name].lease = l.leases.Rule(r.Lease, &a.lease)
		}
	}
	if l.leases != nil && l.cfg.clock == nil {
		l.leases.Start(func(out []lease.Refund[store.Check]) { l.refundLeases(context.Background(), out) })
	}
	return l, nil
}

// Rules returns the limiter's rules, as New was given them.
func (l *Limiter) Rules() []Rule { return slices.Clone(l.given) }

// Allow decides a request of cost 1 against one rule.
func (l *Limiter) Allow(ctx context.Context, rule, identity string) (Decision, error) {
	return l.Decide(ctx, Check{Rule: rule, Identity: identity, Cost: 1})
}

// Decide runs the checks as one all-or-nothing decision in one store call
// (one script run on Redis). Being limited is not an error: err is non-nil
// for an invalid check (ErrCheck; also a stack of more than 256 checks,
// which one script run would decide while Redis served nobody else) or a
// store failure (ErrBackend). A ctx
// that is already done decides nothing, on every store: Decide returns
// ctx's error, not an ErrBackend. So does a ctx whose deadline passes
// while the store decides: the decision may still have run on Redis, and
// is not sent again.
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
	if len(checks) > exact.MaxChecks {
		return Decision{}, fmt.Errorf("%w: %d checks: at most %d are decided together", ErrCheck, len(checks), exact.MaxChecks)
	}
	var buf [4]checked
	sc := scratch.Get(len(checks))
	rules, err := l.prepare(checks, sc.Checks, buf[:0])
	var d Decision
	switch {
	case err != nil:
	case l.leases != nil && leased(sc.Checks, rules):
		d, err = l.decideLeased(ctx, sc.Checks, rules)
	default:
		d, err = l.decideChecks(ctx, sc.Checks, sc.Results, rules)
	}
	// Not deferred, which would grow the frame under every store call: a
	// store that panics leaves the arrays to the collector.
	sc.Recycle()
	return d, err
}

// decideChecks decides prepared checks: through the deny cache, then the
// store (by way of the breaker), which writes into res, of their length;
// it names the results after their rules.
func (l *Limiter) decideChecks(ctx context.Context, sc []store.Check, res []store.Result, rules []checked) (d Decision, err error) {
	now, err := l.now()
	if err != nil {
		return Decision{}, err
	}
	// A stack that Redis denied is denied again locally until its wait is
	// over (see WithDenyCache).
	var t denycache.Ticket
	if l.denied != nil {
		if t = l.cachedDenial(sc, rules, now, &d); d.Cached {
			return d, nil
		}
	}
	nameSlots(sc, rules)
	if err = l.decide(ctx, now, sc, res, &d); err != nil {
		err = callerError(ctx, err)
		if !d.Fallback {
			return Decision{}, err
		}
	}
	for i, r := range rules {
		r.name(&d.Results[i], &sc[i])
	}
	if t.OK && !d.Allowed && !d.Fallback {
		l.cacheDenial(t, sc, d)
	}
	return d, err
}

// nameSlots gives each check of sc that takes slots (its algorithm,
// rules[i]'s, holds units in flight) or may write a state fresh (a
// bucket, GCRA, a queue: the id names the state's epoch) an id (see
// package slotid).
func nameSlots(sc []store.Check, rules []checked) {
	for i := range sc {
		if f := rules[i].algo.facts; (f.InFlight || f.Epochs) && sc[i].Cost > 0 {
			sc[i].Slot = slotid.Next()
		}
	}
}

// checked is a check's rule and the algorithm it is decided with.
type checked struct {
	rule *rule
	algo *algo
}

// name fills in what the limiter knows of res, the result of the store
// check sc of c: its rule's name, policy and shadow mark, and the check,
// for Settle.
func (c checked) name(res *RuleResult, sc *store.Check) {
	res.Rule, res.Policy, res.Shadow = c.rule.name, c.algo.policy, sc.Shadow
	res.check = decided{prefix: sc.Key.Prefix, identity: sc.Key.Identity, alg: sc.Algorithm, cost: sc.Cost}
}

// storeCheck is the store check that res's rule r decided, and the
// algorithm it was decided with: the rule's, or its plan's (cached). r nil
// (not a rule of this Limiter) or a result no store decided give a zero
// check and a nil algorithm.
func (l *Limiter) storeCheck(r *rule, res *RuleResult) (store.Check, *algo) {
	d := &res.check
	if r == nil || d.alg == nil {
		return store.Check{}, nil
	}
	a := r.algo
	if d.alg != a.alg {
		a = l.algoOf(d.alg)
	}
	key := store.Key{Prefix: d.prefix, Rule: r.name, Identity: d.identity, Suffix: a.suffix}
	c := store.Check{Key: key, Algorithm: a.alg, Params: a.params, Cost: d.cost, Shadow: res.Shadow}
	r.blocks(&c)
	return c, a
}

// blocks gives c, a check of r, r's blocks and penalty, when it takes
// blocks.
func (r *rule) blocks(c *store.Check) {
	if r.blockable {
		c.Blocks, c.Penalty = c.Key, r.penalty
		c.Blocks.Suffix = blockSuffix
	}
}

// prepare validates checks and builds their store checks in sc, of their
// length.
func (l *Limiter) prepare(checks []Check, sc []store.Check, out []checked) ([]checked, error) {
	var keys map[store.Key]bool // the keys so far, once there are many (see twice)
	if len(checks) > maxScan {
		keys = make(map[store.Key]bool, len(checks))
	}
	for i, c := range checks {
		r := l.rules[c.Rule]
		if r == nil {
			return nil, fmt.Errorf("%w: no rule %q", ErrCheck, c.Rule)
		}
		a := r.algo
		if c.Plan != nil {
			if a = l.algoOf(c.Plan); a.err != nil {
				return nil, fmt.Errorf("%w: rule %q: %w", ErrCheck, r.name, a.err)
			}
		}
		if c.Identity == "" {
			return nil, fmt.Errorf("%w: rule %q: empty identity", ErrCheck, r.name)
		}
		if c.Cost < 0 {
			return nil, fmt.Errorf("%w: rule %q: negative cost %d", ErrCheck, r.name, c.Cost)
		}
		sc[i] = store.Check{Key: r.key(l.cfg.prefix, c.Identity, a.suffix), Algorithm: a.alg, Params: a.params, Cost: c.Cost, Shadow: r.shadow}
		r.blocks(&sc[i])
		if twice(sc[:i], sc[i].Key, keys) {
			return nil, fmt.Errorf("%w: rule %q: identity checked twice", ErrCheck, r.name)
		}
		out = append(out, checked{r, a})
	}
	return out, nil
}

// twice reports whether k is the key of a check of before, the checks
// prepared so far: compared one by one, or with keys (not nil once the
// checks are more than maxScan), where it is then added, lest a stack of
// many checks take quadratic time.
func twice(before []store.Check, k store.Key, keys map[store.Key]bool) bool {
	if keys != nil {
		if keys[k] {
			return true
		}
		keys[k] = true
		return false
	}
	for j := range before {
		if before[j].Key == k {
			return true
		}
	}
	return false
}

// maxScan is the most checks prepare compares one by one: a stack's are
// few, and found so without a map built for each decision.
const maxScan = 8

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

// decide asks the store, through its breaker, and builds the Decision in
// d from what it wrote in res (d is left alone when nothing decided): its
// rules are named by the caller.
func (l *Limiter) decide(ctx context.Context, now time.Time, sc []store.Check, res []store.Result, d *Decision) error {
	var v store.Verdict
	var fallback bool
	var err error
	if l.breaker != nil {
		v, fallback, err = l.breaker.Decide(ctx, now, sc, res)
	} else {
		v, err = l.store.Decide(ctx, now, sc, res)
	}
	if err != nil {
		var timeout time.Duration // a Remote store's, the breaker's
		if l.breaker != nil {
			timeout = l.breaker.Timeout
		}
		l.releases.Lost(l.store, sc, err, l.slotHold, timeout)
	}
	if err != nil && !fallback {
		return err
	}
	*d = Decision{Allowed: v.Allowed, At: v.At, Fallback: fallback, Results: newResults(len(sc))}
	for i := range res {
		d.Results[i].found(&res[i])
	}
	return err
}

// callerError is err, a store's failure in a call for ctx, as the
// limiter returns it: the caller's end (fault.CallerEnded: ctx cancelled,
// or its deadline passed) is ctx's error, no ErrBackend, since it says
// nothing of the store; any other is backendError's.
func callerError(ctx context.Context, err error) error {
	if fault.CallerEnded(ctx, err) {
		return fmt.Errorf("%w (%v)", cmp.Or(ctx.Err(), context.DeadlineExceeded), err)
	}
	return backendError(err)
}

// backendError wraps a store failure in ErrBackend, and network timeouts in
// context.DeadlineExceeded too, so callers test for one thing.
func backendError(err error) error {
	if fault.IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded) { // a network timeout
		return fmt.Errorf("%w: %w: %w", ErrBackend, context.DeadlineExceeded, unprefixed(err))
	}
	return fmt.Errorf("%w: %w", ErrBackend, unprefixed(err))
}
