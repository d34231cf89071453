package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// A slot release sent twice (a retry after its reply was lost) gives back
// once: with a slot id (store.Check.Slot), the refund removes the
// decision's own units, not any units of its instant, so another
// request's slot taken at the same instant stays held. On the memstore, on
// miniredis and on a real redis-server, at a timestamp near 2^53 µs and
// with ids near 2^52.
func TestSlotReleaseSentTwiceGivesBackOnce(t *testing.T) {
	_, mini := redistest.Mini(t)
	real := redistest.Start(t)
	stores := map[string]store.Store{"memstore": memstore.Must()}
	for name, rdb := range map[string]redis.Scripter{"miniredis": mini, "redis-server": real.Client} {
		s, err := redisstore.New(rdb)
		if err != nil {
			t.Fatal(err)
		}
		stores[name] = s
	}
	ctx := context.Background()
	for name, s := range stores {
		for _, alg := range []algorithms.Algorithm{
			algorithms.Concurrency{Limit: 4, TTL: time.Minute},
			algorithms.SlidingLog{Limit: 4, Window: time.Minute},
		} {
			t.Run(fmt.Sprintf("%s/%v", name, alg), func(t *testing.T) {
				now := time.UnixMicro(exact.MaxTime.UnixMicro() - 123_456_789)
				key := store.Key{Prefix: "slotids", Rule: name, Identity: fmt.Sprint(alg)}
				params := fmt.Sprintf("cc:4:%d:0", time.Minute.Microseconds())
				if _, ok := alg.(algorithms.SlidingLog); ok {
					params = fmt.Sprintf("sl:4:%d:0", time.Minute.Microseconds())
				}
				var slot int64 = 1<<52 - 10
				decide := func(cost int) (store.Check, store.Result, bool) {
					t.Helper()
					slot++
					c := store.Check{Key: key, Algorithm: alg, Params: params, Cost: cost, Slot: slot}
					res := make([]store.Result, 1)
					v, err := s.Decide(ctx, now, []store.Check{c}, res)
					if err != nil {
						t.Fatal(err)
					}
					if v.Allowed && res[0].Token.Stamp != slot {
						t.Fatalf("token %+v, want the slot %d as its stamp", res[0].Token, slot)
					}
					return c, res[0], v.Allowed
				}
				refund := func(c store.Check, r store.Result, back int) {
					t.Helper()
					if err := s.Refund(ctx, now, now, []store.Refund{{Check: c, Back: back, Token: r.Token}}); err != nil {
						t.Fatal(err)
					}
				}
				a, ra, ok1 := decide(1)
				b, rb, ok2 := decide(3) // the other request: 3 slots, all at the same instant
				if !ok1 || !ok2 {
					t.Fatal("not admitted")
				}
				refund(a, ra, 1)
				refund(a, ra, 1) // sent again: nothing more
				if _, _, ok := decide(2); ok {
					t.Fatal("a's release sent twice freed b's slot")
				}
				refund(b, rb, 1) // b gives back one of its three, twice
				refund(b, rb, 1)
				if _, r, ok := decide(2); !ok || r.Remaining != 0 {
					t.Fatalf("after b's partial release, sent twice: allowed %v, remaining %d; want 2 slots free", ok, r.Remaining)
				}
				if _, _, ok := decide(1); ok {
					t.Fatal("a fifth slot")
				}
			})
		}
	}
}

// A decision whose reply was lost is released by its slot id alone, its
// instant unknown (a zero at): the units its id names, wherever they are
// within the bound given (Within), and nothing for a decision without an
// id. The scripts give back exactly
// what the model (the memstore) gives, on miniredis and a real
// redis-server, under random interleavings of decisions, releases of
// either kind (sent twice, in part, of decisions long expired), Resets
// with their marks (which a release of an unknown instant does not read:
// the units a Reset deleted are gone) and time passing, at timestamps
// near 2^53 µs.
func TestLostReplyReleaseMatchesModel(t *testing.T) {
	_, mini := redistest.Mini(t)
	real := redistest.Start(t)
	names := []string{"memstore", "miniredis", "redis-server"}
	stores := []store.Store{memstore.Must()}
	for _, rdb := range []redis.Scripter{mini, real.Client} {
		s, err := redisstore.New(rdb, redisstore.WithMinTTL(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	ctx := context.Background()
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 45))
		limit, span := 1+rng.IntN(5), []time.Duration{time.Millisecond, 40 * time.Millisecond, time.Second}[rng.IntN(3)]
		var alg algorithms.Algorithm = algorithms.Concurrency{Limit: limit, TTL: span}
		params := fmt.Sprintf("cc:%d:%d:0", limit, span.Microseconds())
		if seed%2 == 1 {
			alg, params = algorithms.SlidingLog{Limit: limit, Window: span}, fmt.Sprintf("sl:%d:%d:0", limit, span.Microseconds())
		}
		key := store.Key{Prefix: "lostreply", Rule: fmt.Sprint(seed), Identity: "x"}
		mark := store.Mark{Key: store.Key{Prefix: key.Prefix, Rule: key.Rule, Identity: key.Identity, Suffix: "r"}, TTL: span}
		now := time.UnixMicro(exact.MaxTime.UnixMicro() - 1_000_000_000)
		var slot int64 = 1<<52 - 1000
		type decided struct {
			check store.Check
			token store.Token
			at    time.Time
		}
		var past []decided
		for step := range 400 {
			var got [3]string
			op := rng.IntN(8)
			var d decided
			if len(past) > 0 {
				d = past[rng.IntN(len(past))]
			}
			back := 1 + rng.IntN(max(1, d.check.Cost))
			var within time.Duration // no bound, or one that may leave the decision out
			if rng.IntN(2) == 0 {
				within = time.Duration(rng.Int64N(int64(2 * span)))
			}
			c := store.Check{Key: key, Algorithm: alg, Params: params, Cost: rng.IntN(3)}
			if rng.IntN(4) > 0 { // with an id, three times in four
				slot++
				c.Slot = slot
			}
			reset := op == 7 && rng.IntN(8) == 0
			for i, s := range stores {
				var err error
				switch {
				case op < 4: // a decision
					res := make([]store.Result, 1)
					var v store.Verdict
					v, err = s.Decide(ctx, now, []store.Check{c}, res)
					got[i] = fmt.Sprintf("%v %+v", v.Allowed, res[0])
					if i == 0 && v.Allowed && c.Cost > 0 {
						past = append(past, decided{c, res[0].Token, now})
					}
				case op < 6 && len(past) > 0: // its reply lost: released by id, the instant unknown
					err = s.Refund(ctx, now, time.Time{}, []store.Refund{{Check: d.check, Back: back, Token: d.token, Mark: mark, Within: within}})
				case op == 6 && len(past) > 0: // a release of a known instant
					err = s.Refund(ctx, now, d.at, []store.Refund{{Check: d.check, Back: back, Token: d.token, Mark: mark}})
				case reset:
					_, err = s.Reset(ctx, now, []store.Key{key}, []store.Mark{mark})
				}
				if err != nil {
					t.Fatalf("seed %d step %d, %s: %v", seed, step, names[i], err)
				}
			}
			for i := 1; i < len(stores); i++ {
				if got[i] != got[0] {
					t.Fatalf("seed %d step %d (%v): %s %s, the model %s", seed, step, alg, names[i], got[i], got[0])
				}
			}
			if op == 7 {
				now = now.Add(time.Duration(rng.Int64N(int64(span))))
			}
		}
	}
}
