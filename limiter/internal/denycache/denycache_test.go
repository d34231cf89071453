package denycache

import (
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

func stackOf(identity string) []store.Check {
	return []store.Check{{Key: store.Key{Prefix: "p", Rule: "r", Identity: identity, Suffix: "fw"}, Params: "fw:1:60000000:0", Cost: 1}}
}

func never(int) bool { return false }

// TestPutAgainKeepsOthers: a stack's denial cached again (concurrent
// requests of one denied client each bring the store's answer back) takes
// no room: it must not push another client's denial out of a full shard.
// Map order is random, so the case is tried on many caches.
func TestPutAgainKeepsOthers(t *testing.T) {
	now := time.Now()
	for round := range 200 {
		c := New[int](32, time.Hour) // two entries a shard
		// Two stacks of one shard: among 17, two share one of the 16.
		seen := map[*shard[int]][][]store.Check{}
		var a, b []store.Check
		for i := 0; i < 17 && a == nil; i++ {
			checks := stackOf(strconv.Itoa(i))
			id, _ := c.stackOf(checks, never)
			sh := c.shard(id)
			if prev := seen[sh]; len(prev) > 0 {
				a, b = prev[0], checks
			}
			seen[sh] = append(seen[sh], checks)
		}
		ta, _, _, _ := c.Lookup(a, never, now)
		tb, _, _, _ := c.Lookup(b, never, now)
		c.Put(ta, time.Minute, 1)
		c.Put(tb, time.Minute, 2)
		c.Put(ta, time.Minute, 1) // the same client's second request
		if _, v, _, found := c.Lookup(b, never, now); !found || v != 2 {
			t.Fatalf("round %d: the other denial is gone from a shard holding two (found %v, %d)", round, found, v)
		}
		if _, v, _, found := c.Lookup(a, never, now); !found || v != 1 {
			t.Fatalf("round %d: the denial cached again is gone (found %v, %d)", round, found, v)
		}
	}
}
