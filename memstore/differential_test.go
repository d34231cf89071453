package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

var (
	ctx  = context.Background()
	runs atomic.Int64
)

// randomDuration is a window, period, TTL, penalty or lease: short ones
// make boundaries frequent.
func randomDuration(rng *rand.Rand) time.Duration {
	return []time.Duration{time.Millisecond, 7 * time.Millisecond, 250 * time.Millisecond, time.Second, time.Minute}[rng.IntN(5)]
}

// randomRules returns one rule of each algorithm with small random
// parameters: short windows make boundaries frequent, odd rates make
// periods that are not whole microseconds.
func randomRules(rng *rand.Rand) []limiter.Rule {
	dur := func() time.Duration { return randomDuration(rng) }
	n := func() int { return 1 + rng.IntN(6) }
	rules := []limiter.Rule{
		{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: n(), Window: dur()}},
		{Name: "sl", Algorithm: algorithms.SlidingLog{Limit: n(), Window: dur()}},
		{Name: "sw", Algorithm: algorithms.SlidingWindow{Limit: n(), Window: dur()}},
		{Name: "tb", Algorithm: algorithms.TokenBucket{Capacity: n(), Rate: n(), Period: dur()}},
		{Name: "lb", Algorithm: algorithms.LeakyBucket{Capacity: n(), Rate: n(), Period: dur()}},
		{Name: "gc", Algorithm: algorithms.GCRA{Rate: n(), Period: dur(), Burst: n()}},
		{Name: "fa", Algorithm: algorithms.FixedWindow{Limit: n(), Window: dur(), Anchored: true}},
		{Name: "qu", Algorithm: algorithms.Queue{Rate: n(), Period: dur(), MaxDelay: dur() * time.Duration(rng.IntN(3))}},
		{Name: "cc", Algorithm: algorithms.Concurrency{Limit: n(), TTL: dur()}},
	}
	// A third take blocks, half of those with a penalty; of the others,
	// a leasable rule is leased one time in three.
	for i := range rules {
		switch rng.IntN(6) {
		case 0:
			rules[i].Blockable = true
		case 1:
			rules[i].Penalty = dur()
		case 2, 3:
			switch rules[i].Algorithm.(type) {
			case algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.GCRA:
				rules[i].Lease = dur()
			}
		}
		// A third of the unleased rules are shadow rules, some with blocks
		// or a penalty.
		rules[i].Shadow = rules[i].Lease == 0 && rng.IntN(3) == 0
	}
	return rules
}

// shown is a decision's exported fields, to compare two Limiters'
// decisions (a leased rule's result also points into its own Limiter's
// pools).
func shown(d limiter.Decision) string {
	s := fmt.Sprint(d.Allowed, d.At.UnixMicro(), d.Fallback, d.Cached)
	for _, r := range d.Results {
		s += fmt.Sprintf(" %s %+v %+v %v %+v %d %v", r.Rule, r.Policy, r.Result, r.Blocked, r.Token, r.Leased, r.Shadow)
	}
	return s
}

// refunded copies the model's ResetAfter and NextAfter (and a queue's
// Remaining) into got's results when a stack spanning cluster slots was
// denied: its refunded rules report the ones after their consumption. On
// a cluster, the tokens' Refunded counts also take the give-backs of
// consume-then-refund, which the model never makes: they are copied too.
func refunded(cluster bool, got, want limiter.Decision) {
	if !cluster {
		return
	}
	for i := range got.Results {
		if i < len(want.Results) {
			got.Results[i].Token.Refunded = want.Results[i].Token.Refunded
		}
	}
	if !want.Allowed {
		for i := range got.Results {
			got.Results[i].ResetAfter = want.Results[i].ResetAfter
			got.Results[i].NextAfter = want.Results[i].NextAfter
			if got.Results[i].Rule == "qu" { // a Queue, whatever the plan
				got.Results[i].Remaining = want.Results[i].Remaining
			}
		}
	}
}

// pair is one decision as the Lua scripts and the model made it.
type pair struct{ got, want limiter.Decision }

// luaAndModel returns two limiters of rules on the clock *now, one on the
// Lua scripts on rdb, the other on a memstore (the Go model), that memstore,
// and the key of the first rule's state for the identity "x", all under a
// prefix of their own named after name.
func luaAndModel(t *testing.T, rdb *redis.Client, now *time.Time, name string, rules []limiter.Rule) (lua, model *limiter.Limiter, mem store.Store, key string) {
	t.Helper()
	clock := limiter.WithClock(func() time.Time { return *now })
	name = fmt.Sprintf("%s%d", name, runs.Add(1))
	prefix := limiter.WithPrefix(name)
	lua, err := limiter.New(counted(mwtest.RedisStore(t, rdb, redisstore.WithMinTTL(time.Hour), redisstore.WithTimeout(5*time.Second))),
		rules, clock, prefix, limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	mem = memstore.Must()
	if model, err = limiter.New(counted(mem), rules, clock, prefix); err != nil {
		t.Fatal(err)
	}
	return lua, model, mem, name + ":{" + rules[0].Name + ":x}:" + ruletest.KeySuffix(rules[0].Algorithm)
}

// operate, now and then, settles one of the allowed decisions made so far
// (made now, or earlier: time has passed and other decisions were made
// since, and its state may have drained and clamped) with random final
// costs, settles one a second time (both must refuse), or blocks,
// unblocks or resets a random client, the same way on both limiters, and
// fails when their answers differ (an unblock or reset that finds nothing
// must find nothing on both). On a cluster, where consume-then-refund
// gives back what the model never took, it does not settle.
func operate(t *testing.T, rng *rand.Rand, lua, model *limiter.Limiter, rules []limiter.Rule, cluster bool, pending *[]pair) {
	t.Helper()
	r := rules[rng.IntN(len(rules))]
	id := string(rune('a' + rng.IntN(3)))
	window := algorithms.PolicyOf(r.Algorithm).Window
	var gotErr, wantErr error
	var gotMore, wantMore limiter.Decision
	switch rng.IntN(12) {
	case 0, 1, 2, 3:
		if cluster || len(*pending) == 0 {
			return
		}
		i := len(*pending) - 1 // the decision just made, or an earlier one
		if rng.IntN(2) == 0 {
			i = rng.IntN(len(*pending))
		}
		p := (*pending)[i]
		final := make([]int, len(p.got.Results))
		for i, res := range p.got.Results {
			final[i] = rng.IntN(res.Policy.Quota + 2)
		}
		gotMore, gotErr = lua.Settle(ctx, p.got, final...)
		wantMore, wantErr = model.Settle(ctx, p.want, final...)
		if rng.IntN(4) > 0 {
			*pending = append((*pending)[:i], (*pending)[i+1:]...)
		} // else left pending, to be settled again
	case 4:
		if !r.Blockable && r.Penalty == 0 {
			return
		}
		d := time.Duration(1+rng.IntN(3)) * window
		gotErr, wantErr = lua.Block(ctx, r.Name, id, d), model.Block(ctx, r.Name, id, d)
	case 5:
		gotErr, wantErr = lua.Unblock(ctx, r.Name, id), model.Unblock(ctx, r.Name, id)
	case 6:
		gotErr, wantErr = lua.Reset(ctx, r.Name, id), model.Reset(ctx, r.Name, id)
	default:
		return
	}
	refunded(cluster, gotMore, wantMore)
	if sentinel(gotErr) != sentinel(wantErr) || shown(gotMore) != shown(wantMore) {
		t.Fatalf("operation: lua %+v, %v; model %+v, %v", gotMore, gotErr, wantMore, wantErr)
	}
}

// sentinel is the answer an operation's error stands for: none, or
// settled already; anything else fails the test. Nothing to forget counts
// as none: whether state past its TTL is still found differs (keys live an
// hour on Redis here, the memstore sweeps at random), and what a reset or
// unblock leaves is compared by the decisions that follow.
func sentinel(err error) error {
	if errors.Is(err, limiter.ErrSettled) {
		return limiter.ErrSettled
	}
	if errors.Is(err, limiter.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unexpected: %w", err)
	}
	return nil
}

// otherPlans returns, for each rule, another plan a check may use instead:
// another limit in the same window for the windows and the log, other
// parameters for GCRA and the buckets (a state written under other
// parameters drains at its own rate: past its TTL it reads as empty under
// any plan, as a missing key does). With cluster the buckets keep theirs
// and GCRA its rate and period: a decision that switched a bucket's or
// GCRA's plan gives nothing back, so a stack spanning slots that another
// slot denied keeps that charge, where the model consumed nothing.
func otherPlans(rng *rand.Rand, rules []limiter.Rule, cluster bool) []limiter.Rule {
	n := func() int { return 1 + rng.IntN(6) }
	dur := func() time.Duration { return randomDuration(rng) }
	plans := make([]limiter.Rule, len(rules))
	for i, r := range rules {
		plans[i] = r
		switch a := r.Algorithm.(type) {
		case algorithms.FixedWindow:
			a.Limit = n()
			plans[i].Algorithm = a
		case algorithms.SlidingWindow:
			a.Limit = n()
			plans[i].Algorithm = a
		case algorithms.SlidingLog:
			a.Limit = n()
			plans[i].Algorithm = a
		case algorithms.TokenBucket:
			if !cluster {
				a.Capacity, a.Rate, a.Period = n(), n(), dur()
				plans[i].Algorithm = a
			}
		case algorithms.LeakyBucket:
			if !cluster {
				a.Capacity, a.Rate, a.Period = n(), n(), dur()
				plans[i].Algorithm = a
			}
		case algorithms.GCRA:
			if !cluster {
				a.Rate, a.Period = n(), dur()
			}
			a.Burst = n()
			plans[i].Algorithm = a
		case algorithms.Queue:
			a.Rate = n()
			plans[i].Algorithm = a
		case algorithms.Concurrency:
			a.Limit = n()
			plans[i].Algorithm = a
		}
	}
	return plans
}

// advance picks the next instant: no time, a microsecond, a little, up to a
// window, exactly on or just before a window boundary, or several windows.
func advance(rng *rand.Rand, now time.Time, rules []limiter.Rule) time.Time {
	w := algorithms.PolicyOf(rules[rng.IntN(len(rules))].Algorithm).Window.Microseconds()
	t := now.UnixMicro()
	var d int64
	switch rng.IntN(8) {
	case 0:
	case 1:
		d = 1
	case 2:
		d = rng.Int64N(1000)
	case 3:
		d = rng.Int64N(w + 1)
	case 4:
		d = w - t%w
	case 5:
		d = max(0, w-t%w-1)
	case 6:
		d = w * (1 + rng.Int64N(3))
	default:
		d = rng.Int64N(5 * w)
	}
	return time.UnixMicro(t + d)
}

// randomChecks picks 1 to 3 distinct rules for random identities and costs
// from 0 to one above the limit, a third of the time under the rule's
// other plan (the same algorithm with other parameters: a limit per
// request).
func randomChecks(rng *rand.Rand, rules, plans []limiter.Rule) []limiter.Check {
	perm := rng.Perm(len(rules))[:1+rng.IntN(3)]
	checks := make([]limiter.Check, len(perm))
	for i, r := range perm {
		cost := 1
		if rng.IntN(3) == 0 {
			cost = rng.IntN(algorithms.PolicyOf(rules[r].Algorithm).Quota + 2)
		}
		checks[i] = limiter.Check{Rule: rules[r].Name, Identity: string(rune('a' + rng.IntN(3))), Cost: cost}
		if rng.IntN(3) == 0 {
			checks[i].Plan = plans[r].Algorithm
			checks[i].Cost = min(cost, algorithms.PolicyOf(plans[r].Algorithm).Quota+1)
		}
	}
	return checks
}

// differential drives the same random sequence through the Lua scripts on
// rdb and the Go models in a memstore, with one passed-in clock, and fails
// at the first difference in any decision or Result field.
//
// Key TTLs run on the Redis server's clock, not the passed-in one, so keys
// get a long minimum TTL; the memstore drops state after its TTL, which
// checks that state past its TTL behaves as a missing key.
//
// With cluster, the Redis store groups checks by hash slot and decides
// stacks by consume-then-refund: later decisions then check that a refund
// leaves state exactly as if nothing had been consumed. (A refunded rule's
// ResetAfter and NextAfter are the ones after its consumption, so they are
// not compared.)
//
// With denyCache, the limiter on Redis keeps its deny cache: decisions must
// still match, and a cached wait may only be up to 1 ms longer (a shortened
// wait is rounded up again), never shorter; but for the cache's stated
// exception (see drainPlans), which the fixed seeds passed by chance (seed
// 5062 of TestDifferentialDenyCache's kind meets it at step 37).
func differential(t *testing.T, rdb *redis.Client, seed uint64, steps int, cluster bool, denyCache ...bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed>>1))
	rules := randomRules(rng)
	plans := otherPlans(rng, rules, cluster)
	// Today, or any instant up to exact.MaxTime (µs timestamps near 2^53).
	now := time.UnixMicro(1_790_000_000_000_000 + rng.Int64N(exact.MaxTime.UnixMicro()-1_790_000_000_000_000))
	clock := limiter.WithClock(func() time.Time { return now })
	// A fresh prefix per run: the fuzzer may run a seed twice on one server.
	prefix := limiter.WithPrefix(fmt.Sprintf("diff%d", runs.Add(1)))
	storeOpts := []redisstore.Option{redisstore.WithMinTTL(time.Hour), redisstore.WithTimeout(5 * time.Second)}
	if cluster {
		storeOpts = append(storeOpts, redisstore.WithCluster())
	}
	opts := []limiter.Option{clock, prefix, limiter.WithDenyCache(0, 0)}
	if len(denyCache) > 0 && denyCache[0] {
		opts = append(opts, limiter.WithDenyCache(10_000, time.Hour))
	}
	ids := &slotIDs{rng: rand.New(rand.NewPCG(seed, 0x5107))} // its own: the scenarios stay the seed's
	lua, err := limiter.New(ids.wrap(mwtest.RedisStore(t, rdb, storeOpts...)), rules, opts...)
	if err != nil {
		t.Fatal(err)
	}
	model, err := limiter.New(ids.wrap(memstore.Must()), rules, clock, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var pending []pair
	drained := drainPlans{rules: rules, last: map[[2]string]algorithms.Algorithm{}}
	for step := range steps {
		ids.next(int64(step))
		now = advance(rng, now, rules)
		checks := randomChecks(rng, rules, plans)
		got, err := lua.Decide(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := model.Decide(ctx, checks...)
		refunded(cluster, got, want)
		if got.Cached {
			if (got.Allowed || want.Allowed || got.RetryAfter() < want.RetryAfter() || got.RetryAfter() > want.RetryAfter()+time.Millisecond) && !drained.replanned(checks) {
				t.Fatalf("seed %d step %d: cached %+v, model %+v", seed, step, got, want)
			}
			continue // the other fields are the remembered denial's
		}
		if shown(got) != shown(want) {
			t.Fatalf("seed %d step %d at %d µs, checks %+v:\nlua   %+v\nmodel %+v\nrules %v", seed, step, now.UnixMicro(), checks, got, want, rules)
		}
		if got.Allowed {
			drained.admitted(checks)
		}
		if len(denyCache) == 0 { // a give-back may leave a cached denial stale (see Settle)
			if got.Allowed && len(pending) < 8 {
				pending = append(pending, pair{got, want})
			}
			ids.next(int64(step) + 1<<20)
			operate(t, rng, lua, model, rules, cluster, &pending)
		}
	}
}

// drainPlans keeps, per rule and identity, the plan under which a
// bucket's, GCRA's or a queue's state was last written: the deny cache's
// stated exception (see limiter's denycache.go) is a denial cached under
// one plan after which an admission under another plan makes the state
// drain at that plan's rate, so that the cached wait may be too long.
type drainPlans struct {
	rules []limiter.Rule
	last  map[[2]string]algorithms.Algorithm
}

// planOf is the algorithm c is decided under.
func (p drainPlans) planOf(c limiter.Check) (algorithms.Algorithm, bool) {
	a := c.Plan
	if a == nil {
		for _, r := range p.rules {
			if r.Name == c.Rule {
				a = r.Algorithm
			}
		}
	}
	switch a.(type) {
	case algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.GCRA, algorithms.Queue:
		return a, true
	}
	return a, false
}

// admitted records the plans of an admitted stack's draining checks.
func (p drainPlans) admitted(checks []limiter.Check) {
	for _, c := range checks {
		if a, drains := p.planOf(c); drains && c.Cost > 0 {
			p.last[[2]string{c.Rule, c.Identity}] = a
		}
	}
}

// replanned reports whether a draining check of the stack was last
// admitted under another plan than its own.
func (p drainPlans) replanned(checks []limiter.Check) bool {
	for _, c := range checks {
		a, drains := p.planOf(c)
		if last, ok := p.last[[2]string{c.Rule, c.Identity}]; drains && ok && last != a {
			return true
		}
	}
	return false
}

// slotIDs gives the checks that take ids (a sliding log's, a concurrency
// limit's, and a bucket's, GCRA's or a queue's, whose ids name the
// epochs of the states they write fresh) the same slot ids
// (store.Check.Slot) on the Lua side and on the model's, whatever the
// limiters chose: near 2^52, and none for some of them at random, so that
// units with ids and without share instants, and states of epoch 0 are
// written too.
type slotIDs struct {
	rng  *rand.Rand // nil: every check gets an id
	base int64
	none uint32 // bit i: check i gets no id
	// counted: each Decide starts the ids of the next step, counting its
	// calls (see counted).
	counted bool
	n       int64
}

// next sets the ids of the decisions of the next step, n.
func (s *slotIDs) next(n int64) {
	s.base, s.none = 1<<52-1<<40+n<<6, 0
	if s.rng != nil {
		s.none = s.rng.Uint32() & s.rng.Uint32()
	}
}

// counted is st deciding with ids of its own, which count its decisions
// that take ids: two stores asked the same decisions in the same order
// decide them with the same ids, as the Lua side and the model must to
// write the same epochs (a status, which neither makes nor counts,
// may reach each store its own way).
func counted(st store.Store) store.Store {
	return (&slotIDs{counted: true}).wrap(st)
}

// wrap is st deciding with s's ids.
func (s *slotIDs) wrap(st store.Store) store.Store {
	w := slotted{st, s}
	if _, ok := st.(store.Remote); ok {
		return slottedRemote{w}
	}
	return w
}

type slotted struct {
	store.Store
	ids *slotIDs
}

func (s slotted) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	if s.ids.counted && slices.ContainsFunc(checks, takesID) {
		s.ids.n++
		s.ids.next(s.ids.n)
	}
	for i := range checks {
		if takesID(checks[i]) {
			checks[i].Slot = s.ids.base + int64(i)
			if s.ids.none&(1<<(i%32)) != 0 {
				checks[i].Slot = 0
			}
		}
	}
	return s.Store.Decide(ctx, now, checks, results)
}

// takesID reports whether c takes a slot id: a check that consumes, of
// an algorithm whose units or state an id names.
func takesID(c store.Check) bool {
	switch c.Algorithm.(type) {
	case algorithms.Concurrency, algorithms.SlidingLog, algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.GCRA, algorithms.Queue:
		return c.Cost > 0
	}
	return false
}

type slottedRemote struct{ slotted }

func (s slottedRemote) Remote() time.Duration { return s.Store.(store.Remote).Remote() }

// The differential tests (here, and for GCRA plans and queue settlements)
// run in parallel with one another: each starts servers of its own, keys
// its state under a prefix of its own, reads a passed-in clock and gives
// each Redis call 5 s, so that nothing they assert depends on the CPU
// they share. Alone they are most of the package's run under the race
// detector (miniredis's Lua), and each keeps one core busy.
func TestDifferentialMiniredis(t *testing.T) {
	t.Parallel()
	_, rdb := redistest.Mini(t)
	for seed := range uint64(40) {
		differential(t, rdb, seed, 300, false)
	}
}

func TestDifferentialRedisServer(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	for seed := range uint64(15) {
		differential(t, s.Client, 1000+seed, 200, false)
	}
}

func TestDifferentialDenyCache(t *testing.T) {
	t.Parallel()
	_, mini := redistest.Mini(t)
	for seed := range uint64(30) {
		differential(t, mini, 4000+seed, 300, false, true)
	}
}

func TestDifferentialConsumeThenRefund(t *testing.T) {
	t.Parallel()
	_, mini := redistest.Mini(t)
	for seed := range uint64(30) {
		differential(t, mini, 2000+seed, 300, true)
	}
	s := redistest.Start(t)
	for seed := range uint64(10) {
		differential(t, s.Client, 3000+seed, 200, true)
	}
}

// FuzzDifferential explores seeds beyond the fixed ones (go test -fuzz).
func FuzzDifferential(f *testing.F) {
	for _, seed := range []uint64{1, 42, 7777} {
		f.Add(seed)
	}
	_, rdb := redistest.Mini(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		differential(t, rdb, seed, 60, seed%2 == 1)
	})
}

// A clock that steps back (NTP, a failover to a host whose clock is
// behind) finds state stamped in the future. It must never admit more than
// a steady clock would: after a rule is filled just past a boundary, no
// step back (1 s, half a window, into the previous window) admits
// anything more, and the Lua scripts agree with the models at every step.
func TestClockStepBack(t *testing.T) {
	boundary := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC) // an hour boundary
	for _, b := range redistest.Backends(t) {
		name, rdb := b.Name, b.Client
		for _, back := range []time.Duration{time.Second, 30 * time.Minute, 61 * time.Minute} {
			for _, r := range ruletest.Six(10) { // hour windows and refills
				now := boundary.Add(time.Millisecond)
				clock := limiter.WithClock(func() time.Time { return now })
				prefix := limiter.WithPrefix(fmt.Sprintf("back%d", runs.Add(1)))
				lua, err := limiter.New(counted(mwtest.RedisStore(t, rdb, redisstore.WithMinTTL(time.Hour))), []limiter.Rule{r}, clock, prefix, limiter.WithDenyCache(0, 0))
				if err != nil {
					t.Fatal(err)
				}
				model, err := limiter.New(counted(memstore.Must()), []limiter.Rule{r}, clock, prefix)
				if err != nil {
					t.Fatal(err)
				}
				admitted := 0
				for i := range 30 {
					if i == 12 {
						now = now.Add(-back) // the clock steps back
					}
					got, err := lua.Allow(ctx, r.Name, "x")
					if err != nil {
						t.Fatal(err)
					}
					want, _ := model.Allow(ctx, r.Name, "x")
					if shown(got) != shown(want) {
						t.Fatalf("%s %s back %v request %d:\nlua   %+v\nmodel %+v", name, r.Name, back, i, got, want)
					}
					if got.Allowed {
						admitted++
					}
					now = now.Add(time.Millisecond)
				}
				if admitted != 10 {
					t.Errorf("%s %s: %d admitted with the clock stepping back %v, want exactly the limit 10", name, r.Name, admitted, back)
				}
			}
		}
	}
}
