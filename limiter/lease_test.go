package limiter_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// counting counts a store's decisions and give-backs.
type counting struct {
	store.Store
	decides, refunds atomic.Int64
}

func (c *counting) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	c.decides.Add(1)
	return c.Store.Decide(ctx, now, checks, results)
}

func (c *counting) Refund(ctx context.Context, now, at time.Time, refunds []store.Refund) error {
	c.refunds.Add(1)
	return c.Store.Refund(ctx, now, at, refunds)
}

// clock is a settable clock for the lease tests.
type clock struct{ t atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.t.Store(t.UnixMicro())
	return c
}

func (c *clock) now() time.Time         { return time.UnixMicro(c.t.Load()) }
func (c *clock) add(d time.Duration)    { c.t.Add(d.Microseconds()) }
func (c *clock) option() limiter.Option { return limiter.WithClock(c.now) }

// remaining is what an unleased peek at rule "global" for identity id
// reports, through peeker (a limiter on the same store and prefix).
func remaining(t *testing.T, peeker *limiter.Limiter, id string) int {
	t.Helper()
	d, err := peeker.Status(ctx, "global", id)
	if err != nil {
		t.Fatal(err)
	}
	return d.Results[0].Remaining
}

// leaseStepsOn is the setup of the lease step tables on store s: one
// instance leasing a fixed window of 100 a second for 200 ms, counting its
// store calls, on a clock 100 ms into a second of base, and an unleased
// limiter that peeks at the store's state (keys under tag).
func leaseStepsOn(s store.Store, base time.Time, tag string) (*counting, *clock, *limiter.Limiter, *limiter.Limiter) {
	store := &counting{Store: s}
	clk := newClock(base.Truncate(time.Second).Add(100 * time.Millisecond))
	alg := algorithms.FixedWindow{Limit: 100, Window: time.Second}
	prefix := limiter.WithPrefix(tag + base.Format("2006"))
	lim := must(limiter.New(store, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: 200 * time.Millisecond}}, clk.option(), prefix))
	peeker := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: alg}}, clk.option(), prefix))
	return store, clk, lim, peeker
}

// TestLeaseSteps is a step table of one instance leasing a fixed window of
// 100 a second, on every store: a take asks the store for the request's
// cost and a lease sized to demand, the next requests spend the lease
// without asking, an expired lease goes back before a take replaces it,
// and Close gives back what is left, exactly.
func TestLeaseSteps(t *testing.T) {
	for name, s := range everyStore(t) {
		for _, base := range bases {
			store, clk, lim, peeker := leaseStepsOn(s, base, "steps"+name)
			for i, st := range []struct {
				advance       time.Duration
				wantRemaining int   // reported: the store's at the last take, plus the pool
				wantCalls     []int // decisions and give-backs asked of the store
				wantStore     int   // remaining in the store
			}{
				// A take of 1 and a lease of 4: a demand of 1 over a quarter
				// interval (5 ms) is 200 a second, times the 20 ms interval.
				{0, 99, []int{1, 0}, 95},
				{time.Millisecond, 98, []int{1, 0}, 95},
				{time.Millisecond, 97, []int{1, 0}, 95},
				{time.Millisecond, 96, []int{1, 0}, 95},
				{time.Millisecond, 95, []int{1, 0}, 95},
				// Spent: a take again, its lease sized to the demand since
				// (5 units in 5 ms, averaged with 200 a second: 12 units).
				{time.Millisecond, 94, []int{2, 0}, 82},
				// Past the lease's 200 ms its 12 units go back, then a take
				// (demand has fallen: a lease of 6) replaces it.
				{250 * time.Millisecond, 93, []int{3, 1}, 87},
			} {
				clk.add(st.advance)
				d, err := lim.Allow(ctx, "global", "all")
				if err != nil {
					t.Fatal(err)
				}
				got := []int{d.Results[0].Remaining, int(store.decides.Load()), int(store.refunds.Load()), remaining(t, peeker, "all")}
				want := append(append([]int{st.wantRemaining}, st.wantCalls...), st.wantStore)
				if !d.Allowed || !slices.Equal(got, want) {
					t.Fatalf("%s %d step %d: allowed %v; got remaining, decides, refunds, store %v, want %v", name, base.Year(), i, d.Allowed, got, want)
				}
			}
			if err := lim.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := remaining(t, peeker, "all"), 93; got != want {
				t.Fatalf("%s: 7 admitted, after Close the store has %d remaining, want %d", name, got, want)
			}
		}
	}
}

// TestLeaseTakesAhead: a pool whose lease runs low takes the next one
// ahead, as its spare, while it still holds units, and spends the lease
// in place to its last unit before the spare: no request waits for a
// take, and nothing goes back to the store until Close.
func TestLeaseTakesAhead(t *testing.T) {
	for name, s := range everyStore(t) {
		for _, base := range bases {
			store, clk, lim, peeker := leaseStepsOn(s, base, "ahead"+name)
			// One decision a millisecond; the steps as in TestLeaseSteps up
			// to the take of 12 units at step 5.
			checkpoints := map[int][]int{ // step: remaining reported, decides, refunds, remaining in the store
				5: {94, 2, 0, 82},
				// 8 of the 12 spent: spending one more would leave 3, less
				// than a quarter of the 13 the take consumed.
				13: {86, 2, 0, 82},
				// So this decision takes ahead: its cost and a lease of 16
				// (9 units in 9 ms averaged with 600 a second, over the 20
				// ms interval); the pool holds 4 + 16.
				14: {85, 3, 0, 65},
				18: {81, 3, 0, 65}, // the first lease's last unit
				19: {80, 3, 0, 65}, // the spare's first
			}
			for step := range 20 {
				if step > 0 {
					clk.add(time.Millisecond)
				}
				d, err := lim.Allow(ctx, "global", "all")
				if err != nil || !d.Allowed {
					t.Fatalf("%s %d step %d: allowed %v, %v", name, base.Year(), step, d.Allowed, err)
				}
				want, ok := checkpoints[step]
				if !ok {
					continue
				}
				got := []int{d.Results[0].Remaining, int(store.decides.Load()), int(store.refunds.Load()), remaining(t, peeker, "all")}
				if !slices.Equal(got, want) {
					t.Fatalf("%s %d step %d: got remaining, decides, refunds, store %v, want %v", name, base.Year(), step, got, want)
				}
			}
			if err := lim.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := []int{remaining(t, peeker, "all"), int(store.refunds.Load())}, []int{80, 1}; !slices.Equal(got, want) {
				t.Fatalf("%s: 20 admitted; after Close the store has %d remaining after %d give-backs, want %v", name, got[0], got[1], want)
			}
		}
	}
}

// leaseAlgorithms are the leasable algorithms the property tests run.
var leaseAlgorithms = []algorithms.Algorithm{
	algorithms.FixedWindow{Limit: 30, Window: 100 * time.Millisecond},
	algorithms.SlidingWindow{Limit: 30, Window: 100 * time.Millisecond},
	algorithms.TokenBucket{Capacity: 20, Rate: 15, Period: 100 * time.Millisecond},
	algorithms.LeakyBucket{Capacity: 20, Rate: 15, Period: 100 * time.Millisecond},
	algorithms.GCRA{Rate: 15, Period: 100 * time.Millisecond, Burst: 20},
}

type spent struct {
	at   int64 // µs
	cost int
}

// TestLeasesNeverOverAdmit: three instances lease one global rule (each
// its own Limiter on one store) and a fourth decides it unleased, stacked
// at random with a per-key rule
// that denies some stacks; requests of random costs, time passing by
// steps from 0 to past a lease, settlements that give units back, and
// instances closing, in random order. The units admitted, at the
// instants they were spent, keep the algorithm's promise: an aligned
// window holds at most its limit (a lease never outlives its window), and
// a bucket or GCRA admits at most its size plus what refills over the
// interval and one lease's time to live (a unit is spent at most that
// long after it was taken). After every instance has closed, a fixed
// window holds exactly what was admitted in it: every unit not spent came
// back.
func TestLeasesNeverOverAdmit(t *testing.T) {
	t.Parallel()
	for _, alg := range leaseAlgorithms {
		pol := algorithms.PolicyOf(alg)
		w := pol.Window.Microseconds()
		for seed := range uint64(60) {
			rng := rand.New(rand.NewPCG(seed, 31))
			store := memstore.Must()
			clk := newClock(time.UnixMicro(1_795_000_000_000_000 + rng.Int64N(w)))
			ttl := time.Duration(1+rng.Int64N(2*w)) * time.Microsecond
			rules := []limiter.Rule{
				{Name: "global", Algorithm: alg, Lease: ttl},
				{Name: "perkey", Algorithm: algorithms.FixedWindow{Limit: 4, Window: 50 * time.Millisecond}},
			}
			var fleet []*limiter.Limiter
			for range 3 {
				fleet = append(fleet, must(limiter.New(store, rules, clk.option())))
			}
			// A fourth instance decides the same rule unleased.
			unleased := slices.Clone(rules)
			unleased[0].Lease = 0
			fleet = append(fleet, must(limiter.New(store, unleased, clk.option())))
			var admitted []spent
			type decided struct {
				d limiter.Decision
				i int // its entry in admitted
			}
			var open []decided
			for range 600 {
				switch op := rng.IntN(20); {
				case op < 3:
					clk.add(time.Duration(rng.Int64N(w/4+1)) * time.Microsecond)
				case op == 3:
					clk.add(time.Duration(rng.Int64N(2*ttl.Microseconds()+1)) * time.Microsecond)
				case op == 4 && len(open) > 0: // settle: restored to the lease, or refunded
					k := rng.IntN(len(open))
					o := open[k]
					open = slices.Delete(open, k, k+1)
					final := make([]int, len(o.d.Results))
					final[0] = rng.IntN(admitted[o.i].cost)
					if len(final) > 1 {
						final[1] = 1
					}
					// Any Limiter of the fleet settles it: the rules agree.
					if _, err := fleet[rng.IntN(len(fleet))].Settle(ctx, o.d, final...); err != nil {
						t.Fatal(err)
					}
					admitted[o.i].cost = final[0]
				case op == 5:
					_ = fleet[rng.IntN(len(fleet))].Close()
				default:
					checks := []limiter.Check{{Rule: "global", Identity: "all", Cost: 1 + rng.IntN(3)}}
					if rng.IntN(2) == 0 {
						checks = append(checks, limiter.Check{Rule: "perkey", Identity: string(rune('a' + rng.IntN(2))), Cost: 1})
					}
					d, err := fleet[rng.IntN(len(fleet))].Decide(ctx, checks...)
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						open = append(open, decided{d, len(admitted)})
						admitted = append(admitted, spent{clk.now().UnixMicro(), checks[0].Cost})
					}
				}
			}
			for _, l := range fleet {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if len(admitted) == 0 {
				t.Fatalf("%v seed %d: nothing admitted", alg, seed)
			}
			checkPromise(t, alg, ttl, admitted, seed)
			if _, ok := alg.(algorithms.FixedWindow); ok {
				now := clk.now().UnixMicro()
				in := 0
				for _, a := range admitted {
					if a.at/w == now/w {
						in += a.cost
					}
				}
				peeker := must(limiter.New(store, rules[:1], clk.option()))
				if got, want := remaining(t, peeker, "all"), pol.Quota-in; got != want {
					t.Fatalf("%v seed %d: after Close the window has %d remaining, want %d (%d admitted in it)", alg, seed, got, want, in)
				}
			}
		}
	}
}

// checkPromise checks admissions against alg's promise, a lease's ttl
// added to a bucket's interval.
func checkPromise(t *testing.T, alg algorithms.Algorithm, ttl time.Duration, adm []spent, seed uint64) {
	t.Helper()
	pol := algorithms.PolicyOf(alg)
	w := pol.Window.Microseconds()
	for i := range adm {
		sum := 0
		for j := i; j < len(adm); j++ {
			sum += adm[j].cost
			bound := pol.Quota
			switch a := alg.(type) {
			case algorithms.FixedWindow, algorithms.SlidingWindow:
				if adm[j].at/w != adm[i].at/w {
					continue
				}
			case algorithms.TokenBucket:
				bound += refilled(adm[j].at-adm[i].at+ttl.Microseconds(), a.Rate, a.Period)
			case algorithms.LeakyBucket:
				bound += refilled(adm[j].at-adm[i].at+ttl.Microseconds(), a.Rate, a.Period)
			case algorithms.GCRA:
				bound += refilled(adm[j].at-adm[i].at+ttl.Microseconds(), a.Rate, a.Period)
			}
			if sum > bound {
				t.Fatalf("%v seed %d: %d admitted in [%d, %d] µs, promise is %d", alg, seed, sum, adm[i].at, adm[j].at, bound)
			}
		}
	}
}

// refilled is how many units rate per period refills in d µs.
func refilled(d int64, rate int, period time.Duration) int {
	return int(d * int64(rate) / period.Microseconds())
}

// TestLeasesConcurrent: goroutines share one Limiter's lease pool on the
// real clock (the sweeper running), on every store. They never admit more
// than the bucket holds, and after Close what was admitted and what the
// store has left add up to the bucket exactly: no unit lost, none given
// back twice.
func TestLeasesConcurrent(t *testing.T) {
	alg := algorithms.TokenBucket{Capacity: 500, Rate: 1, Period: 24 * time.Hour}
	for name, s := range everyStore(t) {
		prefix := limiter.WithPrefix("concurrent" + name)
		lim := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: 20 * time.Millisecond}}, prefix))
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := range 150 {
					d, err := lim.Allow(ctx, "global", "all")
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					}
					if i%50 == 0 {
						time.Sleep(25 * time.Millisecond) // past a lease
					}
				}
			})
		}
		wg.Wait()
		if err := lim.Close(); err != nil {
			t.Fatal(err)
		}
		peeker := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: alg}}, prefix))
		left := remaining(t, peeker, "all")
		if n := int(admitted.Load()); n > 500 || n+left != 500 {
			t.Fatalf("%s: admitted %d, %d left after Close; want at most 500, adding up to 500", name, n, left)
		}
	}
}

// TestLeasesUnderAdmitWithinBound: four instances with skewed demand (one
// asks for half of it), twice or more what the rule allows, lease one
// rule; a single unleased Limiter takes the same requests in the same
// order as the reference. Over every window (fixed and sliding windows)
// or over the whole run (buckets and GCRA, whose units carry over), the
// leased fleet admits no less than the reference minus the bound of the
// package doc: the most units each instance held (its largest lease, and
// less than a quarter of the lease before plus a unit, which a pool may
// still hold beside a lease taken ahead), the largest once more and one
// unit, plus what refills over one interval.
func TestLeasesUnderAdmitWithinBound(t *testing.T) {
	t.Parallel()
	const instances, step = 4, 250 * time.Microsecond
	for _, alg := range []algorithms.Algorithm{
		algorithms.FixedWindow{Limit: 400, Window: 100 * time.Millisecond},
		algorithms.SlidingWindow{Limit: 400, Window: 100 * time.Millisecond},
		algorithms.TokenBucket{Capacity: 100, Rate: 400, Period: 100 * time.Millisecond},
		algorithms.LeakyBucket{Capacity: 100, Rate: 400, Period: 100 * time.Millisecond},
		algorithms.GCRA{Rate: 400, Period: 100 * time.Millisecond, Burst: 100},
	} {
		pol := algorithms.PolicyOf(alg)
		w := pol.Window.Microseconds()
		clk := newClock(time.UnixMicro(1_795_000_000_000_000 - 1_795_000_000_000_000%w))
		ttl := 50 * time.Millisecond
		shared := memstore.Must()
		var fleet []*limiter.Limiter
		for range instances {
			fleet = append(fleet, must(limiter.New(shared, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: ttl}}, clk.option())))
		}
		ref := must(limiter.New(memstore.Must(), []limiter.Rule{{Name: "global", Algorithm: alg}}, clk.option()))
		largest := make([]int, instances)
		var got, want []int // admitted per window
		rng := rand.New(rand.NewPCG(5, 5))
		steps := int(800 * time.Millisecond / step)
		for s := range steps {
			win := s * int(step.Microseconds()) / int(w)
			for len(got) <= win {
				got, want = append(got, 0), append(want, 0)
			}
			// 4 requests a step (16,000 a second against 4,000): half to
			// instance 0, the rest to one of the others.
			for k := range 4 {
				i := 0
				if k%2 == 1 {
					i = 1 + rng.IntN(instances-1)
				}
				d, err := fleet[i].Allow(ctx, "global", "all")
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					got[win]++
				}
				largest[i] = max(largest[i], d.Results[0].Leased)
				if r, _ := ref.Allow(ctx, "global", "all"); r.Allowed {
					want[win]++
				}
			}
			clk.add(step)
		}
		sum, top := 0, 0
		for _, b := range largest {
			held := b + (b+1)/4 + 1
			sum, top = sum+held, max(top, held)
		}
		bound := sum + top + 1
		// The interval is at most a tenth of the lease.
		switch a := alg.(type) {
		case algorithms.TokenBucket:
			bound += refilled(ttl.Microseconds()/10, a.Rate, a.Period)
		case algorithms.LeakyBucket:
			bound += refilled(ttl.Microseconds()/10, a.Rate, a.Period)
		case algorithms.GCRA:
			bound += refilled(ttl.Microseconds()/10, a.Rate, a.Period)
		}
		total, totalRef := 0, 0
		for win := range got {
			total, totalRef = total+got[win], totalRef+want[win]
			switch alg.(type) {
			case algorithms.FixedWindow, algorithms.SlidingWindow:
				if got[win] < want[win]-bound {
					t.Errorf("%v: window %d admitted %d, unleased %d, bound %d (largest leases %v)", alg, win, got[win], want[win], bound, largest)
				}
			}
		}
		if total < totalRef-bound || total > totalRef+bound {
			t.Errorf("%v: admitted %d in all, unleased %d, bound %d (largest leases %v)", alg, total, totalRef, bound, largest)
		}
		t.Logf("%v: admitted %d, unleased %d (%.1f%%), bound %d, largest leases %v", alg, total, totalRef, 100*float64(total)/float64(totalRef), bound, largest)
	}
}

// BenchmarkLeasedGlobal decides a per-key rule alone, and stacked with a
// global rule leased or not, on the memstore, from one goroutine and from
// many: what a pool costs on the client.
func BenchmarkLeasedGlobal(b *testing.B) {
	key := limiter.Check{Rule: "key", Identity: "k", Cost: 1}
	global := limiter.Check{Rule: "global", Identity: "all", Cost: 1}
	for _, bc := range []struct {
		name   string
		lease  time.Duration
		checks []limiter.Check
	}{
		{"key alone", 0, []limiter.Check{key}},
		{"lease=0s", 0, []limiter.Check{key, global}},
		{"lease=1s", time.Second, []limiter.Check{key, global}},
	} {
		lim := must(limiter.New(memstore.Must(), []limiter.Rule{
			{Name: "key", Algorithm: algorithms.GCRA{Rate: 1_000_000, Period: time.Second, Burst: 1 << 30}}, // never denies here
			{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1 << 30, Window: time.Second}, Lease: bc.lease},
		}))
		decide := func() {
			_, _ = lim.Decide(ctx, bc.checks...)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decide()
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					decide()
				}
			})
		})
		if err := lim.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLeaseWhileRedisIsDown: with Redis gone, a pool goes on serving the
// units it holds, and only then do decisions fail (ErrBackend, the
// failure policy's cue).
func TestLeaseWhileRedisIsDown(t *testing.T) {
	srv := redistest.Start(t)
	clk := newClock(bases[0])
	alg := algorithms.FixedWindow{Limit: 100, Window: time.Hour}
	store := mustStore(redisstore.New(srv.Client, redisstore.WithTimeout(200*time.Millisecond)))
	lim := must(limiter.New(store, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: time.Minute}}, clk.option()))
	d, err := lim.Allow(ctx, "global", "all")
	if err != nil || !d.Allowed || d.Results[0].Leased != 4 {
		t.Fatalf("first request: %+v, %v; want allowed with a lease of 4", d, err)
	}
	srv.Stop()
	for i := range 4 {
		if d, err := lim.Allow(ctx, "global", "all"); err != nil || !d.Allowed {
			t.Fatalf("request %d with Redis down: %v, %v; want served from the pool", i, d.Allowed, err)
		}
	}
	if _, err := lim.Allow(ctx, "global", "all"); !errors.Is(err, limiter.ErrBackend) {
		t.Fatalf("the pool spent, Redis down: %v, want ErrBackend", err)
	}
	if err := lim.Close(); err != nil {
		t.Fatalf("Close with nothing to give back: %v", err)
	}
}

// leasedFleetTable runs two instances that stack a per-user rule (2 an
// hour per user) with a leased global rule (50 an hour) on store: 90
// requests, three from each of 30 users in a row. The two never admit
// more than 50 together, and after Close what they admitted and what the
// store has left add up to 50: the stacks the per-user rule denied spent
// no global unit, and every unit leased and not spent came back.
func leasedFleetTable(t *testing.T, store store.Store, prefix string) {
	t.Helper()
	rules := []limiter.Rule{
		{Name: "per-user", Algorithm: algorithms.FixedWindow{Limit: 2, Window: time.Hour}},
		{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 50, Window: time.Hour}, Lease: time.Minute},
	}
	opts := []limiter.Option{fixedClock(bases[0]), limiter.WithPrefix(prefix)}
	fleet := []*limiter.Limiter{newLimiter(t, store, rules, opts...), newLimiter(t, store, rules, opts...)}
	admitted, deniedByUser := 0, 0
	for i := range 90 {
		d, err := fleet[i%2].Decide(ctx,
			limiter.Check{Rule: "per-user", Identity: "u" + string(rune('A'+i/3)), Cost: 1},
			limiter.Check{Rule: "global", Identity: "all", Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case d.Allowed:
			admitted++
		case !d.Results[0].Allowed:
			deniedByUser++
		}
	}
	for _, l := range fleet {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	peeker := newLimiter(t, store, rules[1:], opts...)
	left := remaining(t, peeker, "all")
	if admitted > 50 || admitted+left != 50 || deniedByUser < 20 || admitted < 45 {
		t.Fatalf("admitted %d (at most 50, and nearly all), %d left after Close (adding up to 50), %d denied by the per-user rule (want 20 or more)", admitted, left, deniedByUser)
	}
}

// TestLeasedFleet runs leasedFleetTable on every store.
func TestLeasedFleet(t *testing.T) {
	for name, s := range everyStore(t) {
		t.Run(name, func(t *testing.T) { leasedFleetTable(t, s, "fleet"+name) })
	}
}

// TestLeaseConfig: a lease on a rule that cannot take one is an ErrConfig
// naming the rule; a bucket of the longest refill leases.
func TestLeaseConfig(t *testing.T) {
	for _, tc := range []struct {
		rule limiter.Rule
		ok   bool
	}{
		{limiter.Rule{Name: "log", Algorithm: algorithms.SlidingLog{Limit: 5, Window: time.Second}, Lease: time.Second}, false},
		{limiter.Rule{Name: "queue", Algorithm: algorithms.Queue{Rate: 5, Period: time.Second}, Lease: time.Second}, false},
		{limiter.Rule{Name: "inflight", Algorithm: algorithms.Concurrency{Limit: 5, TTL: time.Second}, Lease: time.Second}, false},
		{limiter.Rule{Name: "blocks", Algorithm: algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, Blockable: true, Lease: time.Second}, false},
		{limiter.Rule{Name: "penalty", Algorithm: algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, Penalty: time.Minute, Lease: time.Second}, false},
		{limiter.Rule{Name: "negative", Algorithm: algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, Lease: -time.Second}, false},
		{limiter.Rule{Name: "long", Algorithm: algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, Lease: time.Hour}, false},
		{limiter.Rule{Name: "huge", Algorithm: algorithms.TokenBucket{Capacity: 1, Rate: 1, Period: 10 * 365 * 24 * time.Hour}, Lease: time.Second}, true},
		{limiter.Rule{Name: "window", Algorithm: algorithms.SlidingWindow{Limit: 5, Window: time.Second}, Lease: time.Second}, true},
	} {
		lim, err := limiter.New(memstore.Must(), []limiter.Rule{tc.rule})
		if err == nil {
			_ = lim.Close() // stops its sweeper
		}
		if got := err == nil; got != tc.ok {
			t.Errorf("rule %s: err %v, want ok %v", tc.rule.Name, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `"`+tc.rule.Name+`"`)) {
			t.Errorf("rule %s: %v is not an ErrConfig naming the rule", tc.rule.Name, err)
		}
	}
}
