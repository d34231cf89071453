package limiter_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// counting counts a store's decisions and give-backs.
type counting struct {
	limiter.Store
	decides, refunds atomic.Int64
}

func (c *counting) Decide(ctx context.Context, now time.Time, checks []limiter.StoreCheck) (limiter.Decision, error) {
	c.decides.Add(1)
	return c.Store.Decide(ctx, now, checks)
}

func (c *counting) Refund(ctx context.Context, now, at time.Time, refunds []limiter.StoreRefund) error {
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

// TestLeaseSteps is a step table of one instance leasing a fixed window of
// 100 a second, on every store: a take asks the store for the request's
// cost and a lease sized to demand, the next requests spend the lease
// without asking, an expired lease goes back before a take replaces it,
// and Close gives back what is left, exactly.
func TestLeaseSteps(t *testing.T) {
	for name, s := range everyStore(t) {
		for _, base := range bases {
			store := &counting{Store: s}
			clk := newClock(base.Truncate(time.Second).Add(100 * time.Millisecond))
			alg := algorithms.FixedWindow{Limit: 100, Window: time.Second}
			prefix := limiter.WithPrefix("steps" + name + base.Format("2006"))
			lim := must(limiter.New(store, []limiter.Rule{{Name: "global", Algorithm: alg, Lease: 200 * time.Millisecond}}, clk.option(), prefix))
			peeker := must(limiter.New(s, []limiter.Rule{{Name: "global", Algorithm: alg}}, clk.option(), prefix))
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
