package memstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestDifferentialQueueSettlement: queue decisions settled in random order
// and at random times, with the queue emptying now and then, leave the
// same state on the Lua scripts (miniredis and a real redis-server) as in
// the Go model.
func TestDifferentialQueueSettlement(t *testing.T) {
	t.Parallel()
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			outOfOrder := 0
			for seed := range uint64(20) {
				outOfOrder += queueDifferential(t, b.Client, 5000+seed, 300)
			}
			if outOfOrder < 200 {
				t.Errorf("only %d give-backs out of order changed the queue", outOfOrder)
			}
		})
	}
}

// queueDifferential drives one queue, under its rule and a plan of another
// rate, through random decisions and settlements (of any decision still
// pending, at a final cost below its cost) on the Lua scripts on rdb and
// the Go model in a memstore, with one passed-in clock, and fails at the
// first difference in a decision or a settlement. It returns how many
// settlements of a decision older than the latest pending one changed the
// queue.
func queueDifferential(t *testing.T, rdb *redis.Client, seed uint64, steps int) (outOfOrder int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	q := algorithms.Queue{Rate: 1 + rng.IntN(20), Period: 100 * time.Millisecond, MaxDelay: time.Duration(50+rng.IntN(250)) * time.Millisecond}
	plan := q
	plan.Rate = 1 + rng.IntN(20)
	rules := []limiter.Rule{{Name: "q", Algorithm: q}}
	now := time.UnixMicro(1_790_000_000_000_000 + rng.Int64N(exact.MaxTime.UnixMicro()-1_790_000_000_000_000))
	lua, model, mem, key := luaAndModel(t, rdb, &now, "qdiff", rules)
	type queued struct {
		pair
		cost int
	}
	var pending []queued
	for step := range steps {
		switch maxDelay := q.MaxDelay.Microseconds(); rng.IntN(12) {
		case 0, 1, 2, 3, 4: // same instant
		case 5, 6, 7, 8:
			now = now.Add(time.Duration(rng.Int64N(maxDelay/16+1)) * time.Microsecond)
		case 9, 10:
			now = now.Add(time.Duration(rng.Int64N(maxDelay+1)) * time.Microsecond)
		default: // the queue empties, often
			now = now.Add(time.Duration(rng.Int64N(3*maxDelay+1)) * time.Microsecond)
		}
		if len(pending) == 0 || len(pending) < 32 && rng.IntN(2) == 0 {
			c := limiter.Check{Rule: "q", Identity: "x", Cost: 1}
			if rng.IntN(3) == 0 {
				c.Cost += rng.IntN(3)
			}
			if rng.IntN(3) == 0 {
				c.Plan = plan
			}
			got, err := lua.Decide(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := model.Decide(ctx, c); shown(got) != shown(want) {
				t.Fatalf("seed %d step %d, check %+v:\nlua   %+v\nmodel %+v", seed, step, c, got, want)
			} else if got.Allowed {
				pending = append(pending, queued{pair{got, want}, c.Cost})
			}
			continue
		}
		i := len(pending) - 1 - rng.IntN(min(len(pending), 8)) // a recent one, mostly
		if rng.IntN(4) == 0 {
			i = rng.IntN(len(pending))
		}
		p := pending[i]
		pending = append(pending[:i], pending[i+1:]...)
		final := rng.IntN(p.cost)
		before, _ := model.Status(ctx, "q", "x")
		_, gotErr := lua.Settle(ctx, p.got, final)
		_, wantErr := model.Settle(ctx, p.want, final)
		if gotErr != nil || wantErr != nil {
			t.Fatalf("seed %d step %d: settled: lua %v, model %v", seed, step, gotErr, wantErr)
		}
		got, _ := lua.Status(ctx, "q", "x")
		if want, _ := model.Status(ctx, "q", "x"); shown(got) != shown(want) {
			t.Fatalf("seed %d step %d, %d of %d given back:\nlua   %+v\nmodel %+v", seed, step, p.cost-final, p.cost, got, want)
		} else if i < len(pending) && shown(before) != shown(want) {
			outOfOrder++
		}
		// The key's string, holes included, is the model's state; past
		// its TTL the memstore forgot it, where Redis keeps it an hour.
		if st := memstore.StateAt(mem, key, now); st.Exists {
			if got, want := rdb.Get(ctx, key).Val(), queueString(st); got != want {
				t.Fatalf("seed %d step %d, %d of %d given back: stored %q, model %q", seed, step, p.cost-final, p.cost, got, want)
			}
		}
	}
	return outOfOrder
}

// queueString is how queue.lua stores st: the tail, its epoch, then,
// when it has a ledger, its three integers and its holes.
func queueString(st model.State) string {
	s := fmt.Sprint(st.TAT) + epochString(st)
	if l := st.Ledger; l.Until != 0 {
		s += fmt.Sprintf(":%d:%d:%d", l.Refunded, l.Until, l.Since)
		for _, h := range l.Holes {
			s += fmt.Sprintf(",%d,%d,%d", h.Stamp, h.Refunded, h.Length)
		}
	}
	return s
}

// TestLongQueuesStayExact: a queue's tail runs up to MaxDelay plus one
// turn ahead of now. At the latest instant a decision can be made at
// (exact.MaxTime), the longest queues a Limiter accepts keep it below 2^53
// µs, so the Lua scripts, whose numbers are doubles, agree with the Go
// model; a queue whose tail could run further is refused.
func TestLongQueuesStayExact(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	year := 365 * 24 * time.Hour
	for i, q := range []algorithms.Queue{
		{Rate: 1, Period: 5 * year, MaxDelay: 5 * year},
		{Rate: 1, Period: 10 * year, MaxDelay: 10 * year},
		{Rate: 1, Period: time.Millisecond, MaxDelay: 10 * year},
		{Rate: 3, Period: 9 * year, MaxDelay: 7 * year},
	} {
		now := exact.MaxTime
		rules := []limiter.Rule{{Name: "q", Algorithm: q}}
		if err := q.Validate(); err != nil {
			continue // refused: no Limiter decides it
		}
		lua, mod, _, _ := luaAndModel(t, s.Client, &now, fmt.Sprintf("long%d", i), rules)
		for n := range 3 {
			got, err := lua.Decide(ctx, limiter.Check{Rule: "q", Identity: "x", Cost: 1})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := mod.Decide(ctx, limiter.Check{Rule: "q", Identity: "x", Cost: 1})
			if shown(got) != shown(want) {
				t.Errorf("%v, request %d at %v:\nlua   %v\nmodel %v", q, n, now, shown(got), shown(want))
			}
		}
	}
}
