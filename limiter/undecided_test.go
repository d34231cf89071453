package limiter_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TestUndecidedRules: a stack of a per-IP rule and a global rule of 1 an
// hour, on every store. A denial the store made decided both rules: the
// per-IP rule allowed. A denial made without the store, by the global
// rule's lease pool or by the deny cache, asked the per-IP rule nothing:
// it is reported Undecided.
func TestUndecidedRules(t *testing.T) {
	stores := map[string]store.Store{"memstore": memstore.Must()}
	for _, b := range redistest.Backends(t) {
		stores[b.Name] = mustStore(redisstore.New(b.Client, redisstore.WithMinTTL(time.Hour), exactnessTimeout))
	}
	type verdict struct{ allowed, undecided bool }
	for name, s := range stores {
		for _, tc := range []struct {
			name  string
			lease time.Duration
			want  [][]verdict // per request: the per-IP rule's, the global rule's
			local []bool      // per request: decided without the store
		}{
			{"leased", time.Second,
				[][]verdict{{{true, false}, {true, false}}, {{true, true}, {false, false}}},
				[]bool{false, true}},
			{"deny cache", 0,
				[][]verdict{{{true, false}, {true, false}}, {{true, false}, {false, false}}, {{true, true}, {false, false}}},
				[]bool{false, false, true}},
		} {
			counted := &counting{Store: s}
			lim := must(limiter.New(counted, []limiter.Rule{
				{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}},
				{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}, Lease: tc.lease},
			}, fixedClock(bases[0]), limiter.WithDenyCache(100, time.Minute), limiter.WithPrefix("undecided"+name+tc.name)))
			for i, want := range tc.want {
				asked := counted.decides.Load()
				d, err := lim.Decide(ctx, limiter.Check{Rule: "per-ip", Identity: "203.0.113.9", Cost: 1},
					limiter.Check{Rule: "global", Identity: "all", Cost: 1})
				if err != nil {
					t.Fatal(err)
				}
				var got []verdict
				for _, r := range d.Results {
					got = append(got, verdict{r.Allowed, r.Undecided})
				}
				if local := counted.decides.Load() == asked; !slices.Equal(got, want) || local != tc.local[i] {
					t.Errorf("%s, %s, request %d: (allowed, undecided) per rule %v, decided without the store %v; want %v, %v",
						name, tc.name, i, got, local, want, tc.local[i])
				}
			}
			if err := lim.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
