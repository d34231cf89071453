package redisstore_test

import (
	"context"
	"fmt"
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
